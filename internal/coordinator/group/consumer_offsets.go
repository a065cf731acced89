package group

import "github.com/twmb/franz-go/pkg/kerr"

// commitVerdict is whether an OffsetCommit (or TxnOffsetCommit) may write
// a consumer group's offsets: code for every partition, or, for a
// consumer-protocol member committing at an epoch older than its current
// one (KIP-1251), a decision per partition (olderEpoch set).
type commitVerdict struct {
	code       int16
	olderEpoch bool
	member     *consumerMember
	epoch      int32
	stale      int16 // the code of a partition the member has not held since epoch
}

// refuse is the verdict that refuses every partition with code.
func refuse(code int16) commitVerdict { return commitVerdict{code: code} }

// partition is the verdict for partition p of topic, named as view names
// topics: with olderEpoch, the member must have held the partition since
// an epoch no later than the commit's (Kafka 4.3's assignmentEpoch <=
// commit epoch <= member epoch), so that a zombie of an earlier owner
// cannot overwrite its successor's offsets. view is read only then.
func (v commitVerdict) partition(view func() TopicsView, topic string, p int32) int16 {
	if v.code != 0 || !v.olderEpoch {
		return v.code
	}
	id, _, known := view().Topic(topic)
	if since, ok := v.member.assignedSince[id][p]; known && ok && since <= v.epoch {
		return 0
	}
	return v.stale
}

// commitCheck is Kafka's ConsumerGroup.validateOffsetCommit. An admin or a
// client outside group management (epoch below 0) commits only while the
// group has no members, and a transactional commit that names no member
// always; a member must be known (UNKNOWN_MEMBER_ID), commit with
// OffsetCommit v9 or later unless it is transactional (UNSUPPORTED_VERSION:
// older versions have no member epoch), and at its current epoch or, for a
// consumer-protocol member, an older one under which it already held the
// partitions (KIP-1251). A stale epoch is STALE_MEMBER_EPOCH, or
// ILLEGAL_GENERATION for a transactional commit (that API has no
// STALE_MEMBER_EPOCH) or a member of the classic protocol.
func (cg *consumerGroup) commitCheck(memberID string, instanceID *string, epoch int32, transactional bool, version int16) commitVerdict {
	if epoch < 0 && len(cg.members) == 0 {
		return commitVerdict{}
	}
	if transactional && epoch < 0 && memberID == "" && instanceID == nil {
		return commitVerdict{}
	}
	m, ok := cg.members[memberID]
	switch {
	case !ok:
		return refuse(kerr.UnknownMemberID.Code)
	case !transactional && m.classic == nil && version < 9:
		return refuse(kerr.UnsupportedVersion.Code)
	case epoch == m.Epoch:
		return commitVerdict{}
	}
	stale := kerr.StaleMemberEpoch.Code
	if transactional || m.classic != nil {
		stale = kerr.IllegalGeneration.Code
	}
	if epoch > m.Epoch || epoch < 0 || m.classic != nil {
		return refuse(stale)
	}
	return commitVerdict{olderEpoch: true, member: m, epoch: epoch, stale: stale}
}

// fetchCheck is whether an OffsetFetch naming memberID (nil: none) at
// epoch may read a consumer group's offsets (Kafka's
// validateOffsetFetch): a request naming no member, at an epoch below 0,
// comes from an admin or a client that does not say, and may; a member
// must be known and at its current epoch.
func (cg *consumerGroup) fetchCheck(memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return 0
	}
	var m *consumerMember
	if memberID != nil {
		m = cg.members[*memberID]
	}
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case epoch != m.Epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}
