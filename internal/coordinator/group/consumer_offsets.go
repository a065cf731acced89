package group

import "github.com/twmb/franz-go/pkg/kerr"

// commitCheck is whether an OffsetCommit (or TxnOffsetCommit) by memberID
// at epoch may write a consumer group's offsets, as Kafka's
// ConsumerGroup.validateOffsetCommit decides: 0, or the error code. An
// admin or a client outside group management (epoch below 0) commits only
// while the group has no members; a member must be known
// (UNKNOWN_MEMBER_ID), commit with OffsetCommit v9 or later unless it is
// transactional (UNSUPPORTED_VERSION: older versions have no member
// epoch), and at its current epoch (STALE_MEMBER_EPOCH).
func (cg *consumerGroup) commitCheck(memberID string, epoch int32, transactional bool, version int16) int16 {
	if epoch < 0 && len(cg.members) == 0 {
		return 0
	}
	m, ok := cg.members[memberID]
	switch {
	case !ok:
		return kerr.UnknownMemberID.Code
	case !transactional && m.classic == nil && version < 9:
		return kerr.UnsupportedVersion.Code
	case epoch != m.Epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
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
