package group

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// consumerSettings are the group.consumer.* settings of a heartbeat.
type consumerSettings struct {
	sessionTimeout    time.Duration // group.consumer.session.timeout.ms
	heartbeatInterval time.Duration // group.consumer.heartbeat.interval.ms
	maxSize           int           // group.consumer.max.size
	assignors         []string      // group.consumer.assignors, the default first
}

// heartbeat answers one validated ConsumerGroupHeartbeat that joins or
// heartbeats (epoch 0 or more) for w's group, writing what changes (Kafka's
// consumerGroupHeartbeat): the member's metadata when it changed, the
// group epoch when the subscriptions or their topics changed, the target
// assignment when it is behind the group epoch, and the member's
// reconciled assignment. newMemberID names a member a v0 client left
// unnamed. A group that does not exist yet is created (w.cg nil): the
// caller keeps it only if records were written.
func (w *consumerWrite) heartbeat(op runtime.Op, req *kmsg.ConsumerGroupHeartbeatRequest, view TopicsView, set consumerSettings, now time.Time, newMemberID func() string) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	if w.cg == nil {
		w.cg = newConsumerGroup()
	}
	m, refusal := w.memberFor(req, set, newMemberID)
	if refusal.code != 0 {
		resp.ErrorCode, resp.ErrorMessage = refusal.code, &refusal.message
		return resp
	}
	before := m.Member

	subscriptionChanged := w.updateMember(m, op, req)
	m = w.cg.members[m.id] // a new member exists from its first record on
	w.advance(view, set.assignors, subscriptionChanged, now)
	owned, ownedReported := ownedPartitions(req.Topics)
	if err := w.reconcile(m, view, subscriptionChanged, owned, ownedReported); err != nil {
		resp.ErrorCode = kerr.FencedMemberEpoch.Code
		return resp
	}

	m.session = armAt(now.Add(set.sessionTimeout))
	m.classicJoin, m.classicSync = deadline{}, deadline{}
	switch {
	case m.State != reconcile.UnrevokedPartitions:
		m.revocation = deadline{}
	case !m.revocation.armed:
		m.revocation = armAt(now.Add(m.rebalanceTimeout))
	}
	resp.MemberID, resp.MemberEpoch = &m.id, m.Epoch
	resp.HeartbeatIntervalMillis = int32(set.heartbeatInterval.Milliseconds())
	if ownedReported || req.MemberEpoch == joinEpoch || !m.Assigned.Equal(before.Assigned) {
		resp.Assignment = responseAssignment(m.Assigned)
	}
	return resp
}

// advance moves the group on after a member's request: its regular
// expressions resolved again when due, the group epoch bumped when a
// subscription or the subscribed topics changed, and the target assigned
// when it is behind the group epoch.
func (w *consumerWrite) advance(view TopicsView, assignors []string, subscriptionChanged bool, now time.Time) {
	resolved := w.resolveRegexes(view, now)
	if hash := w.cg.subscriptionHash(view); subscriptionChanged || resolved || hash != w.cg.metadataHash {
		w.write(consumerGroupMetadataKey(w.id), consumerGroupMetadataValue(w.groupMetadata(w.cg.epoch+1, hash, now)))
	}
	if w.cg.epoch > w.cg.assignmentEpoch {
		w.assignTargets(view, assignors, now)
	}
}

// reconcile takes m one step towards its target (reconcile.Next), given
// what its request says it owns, and writes its assignment if that moved.
func (w *consumerWrite) reconcile(m *consumerMember, view TopicsView, subscriptionChanged bool, owned assignor.Assignment, ownedReported bool) error {
	next, err := reconcile.Next(m.Member, reconcile.Input{
		TargetEpoch:         w.cg.assignmentEpoch,
		Target:              w.cg.targets[m.id],
		Subscribed:          w.subscribedIDs(m, view),
		SubscriptionChanged: subscriptionChanged,
		Owned:               owned,
		OwnedReported:       ownedReported,
		PartitionEpoch:      w.cg.partitionEpoch,
	})
	if err != nil {
		return err
	}
	if !sameReconciliation(m.Member, next) {
		w.write(currentMemberAssignmentKey(w.id, m.id), currentMemberAssignmentValue(currentAssignmentOf(next)))
	}
	return nil
}

// putMember writes meta as m's metadata if m is new or it changes it.
func (w *consumerWrite) putMember(m *consumerMember, meta memberMetadata) {
	if _, known := w.cg.members[m.id]; !known || !meta.equal(m.metadata()) {
		w.write(memberMetadataKey(w.id, m.id), memberMetadataValue(meta))
	}
}

// memberFor is the member a joining or heartbeating request speaks for:
// a new member on a join (a v0 client's named here; a static one
// replacing the member of its instance that left for a while), a known
// member at an epoch it may send otherwise.
func (w *consumerWrite) memberFor(req *kmsg.ConsumerGroupHeartbeatRequest, set consumerSettings, newMemberID func() string) (*consumerMember, heartbeatRefusal) {
	id := req.MemberID
	if req.MemberEpoch != joinEpoch {
		if refusal := w.checkInstance(req); refusal.code != 0 {
			return nil, refusal
		}
		m, ok := w.cg.members[id]
		if !ok {
			return nil, heartbeatRefusal{kerr.UnknownMemberID.Code, "member " + id + " is not in group " + w.id + "."}
		}
		owned, reported := ownedPartitions(req.Topics)
		if reconcile.CheckEpoch(m.Member, req.MemberEpoch, owned, reported) != nil {
			return nil, heartbeatRefusal{kerr.FencedMemberEpoch.Code, "the member epoch is not the one the group coordinator knows; the member must abandon its partitions and rejoin."}
		}
		return m, heartbeatRefusal{}
	}
	if id == "" {
		id = newMemberID()
	}
	if m, ok := w.cg.members[id]; ok && changesInstance(m.instanceID, req.InstanceID) {
		return nil, heartbeatRefusal{kerr.InvalidRequest.Code, "member " + id + " joined with instance id " + *req.InstanceID +
			" but is in group " + w.id + " " + instanceNamed(m.instanceID) + "; a member keeps its instance id: join under a new member id."}
	}
	if req.InstanceID != nil {
		if prev, ok := w.cg.static[*req.InstanceID]; ok && prev != id {
			old := w.cg.members[prev]
			if old.Epoch != staticLeaveEpoch {
				return nil, heartbeatRefusal{kerr.UnreleasedInstanceID.Code, "static member " + prev + " with instance id " + *req.InstanceID + " is still in group " + w.id + "; it must leave first."}
			}
			return w.replaceStatic(old, id, old.PreviousEpoch), heartbeatRefusal{}
		}
	}
	if m, ok := w.cg.members[id]; ok {
		// A member joining again (after a fence) starts over.
		w.write(currentMemberAssignmentKey(w.id, id), currentMemberAssignmentValue(currentAssignmentOf(joiningMember())))
		return m, heartbeatRefusal{}
	}
	if len(w.cg.members) >= set.maxSize {
		return nil, heartbeatRefusal{kerr.GroupMaxSizeReached.Code, "the consumer group has reached its maximum size."}
	}
	return newConsumerMember(id), heartbeatRefusal{}
}

// changesInstance reports whether a join naming instance would change the
// instance id of a member that has had (a join naming none keeps the
// member's). Kafka refuses that (apache/kafka#23542): a known member
// id on a join is then the same member, static or not, and a static one
// rejoining under its own id (its join's answer lost, or after
// FENCED_MEMBER_EPOCH) starts over in place rather than being told its
// instance is unreleased.
func changesInstance(had, instance *string) bool {
	return instance != nil && (had == nil || *had != *instance)
}

// instanceNamed says which instance id a member has, for an error message.
func instanceNamed(instance *string) string {
	if instance == nil {
		return "without one"
	}
	return "as instance " + *instance
}

// checkInstance refuses a heartbeat past the join that names an instance
// id, unless that instance is the member's own (Kafka's
// throwIfStaticMemberIsUnknown and throwIfInstanceIdIsFenced): a member
// cannot take an instance id, or another member's, without joining.
func (w *consumerWrite) checkInstance(req *kmsg.ConsumerGroupHeartbeatRequest) heartbeatRefusal {
	if req.InstanceID == nil {
		return heartbeatRefusal{}
	}
	owner, ok := w.cg.static[*req.InstanceID]
	switch {
	case !ok:
		return heartbeatRefusal{kerr.UnknownMemberID.Code, "Instance id " + *req.InstanceID + " is unknown."}
	case owner != req.MemberID:
		return heartbeatRefusal{kerr.FencedInstanceID.Code, "Static member " + req.MemberID + " with instance id " + *req.InstanceID + " was fenced by member " + owner + "."}
	}
	return heartbeatRefusal{}
}

// replaceStatic hands the assignment of old, a static member, to the
// member id that takes its instance over, at epoch: old's records go, the
// new member's come with old's target and assignment. A consumer-protocol
// member takes back what it had before its leave (epoch: old's previous
// one), a classic member starts from epoch 0 with it (as Kafka).
func (w *consumerWrite) replaceStatic(old *consumerMember, id string, epoch int32) *consumerMember {
	target, current := w.cg.targets[old.id], old.Member
	meta := old.metadata()
	w.removeMember(old)
	w.write(memberMetadataKey(w.id, id), memberMetadataValue(meta))
	if target != nil {
		w.write(targetAssignmentMemberKey(w.id, id), targetAssignmentMemberValue(targetAssignmentMember{TopicPartitions: topicPartitionsOf(target)}))
	}
	current.Epoch = epoch
	if epoch == 0 {
		current.PreviousEpoch = 0
	}
	w.write(currentMemberAssignmentKey(w.id, id), currentMemberAssignmentValue(currentAssignmentOf(current)))
	return w.cg.members[id]
}

// removeMember writes a member's tombstones, in Kafka's order.
func (w *consumerWrite) removeMember(m *consumerMember) {
	w.write(currentMemberAssignmentKey(w.id, m.id), nil)
	w.write(targetAssignmentMemberKey(w.id, m.id), nil)
	w.write(memberMetadataKey(w.id, m.id), nil)
}

// leave answers a ConsumerGroupHeartbeat with epoch -1 (the member
// leaves: the caller fences the member it returns, so that the others are
// assigned its partitions) or -2 (a static member leaves for a while: it
// keeps its assignment, at epoch -2, until it comes back or its session
// ends).
func (w *consumerWrite) leave(req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, *consumerMember) {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.MemberID, resp.MemberEpoch = &req.MemberID, req.MemberEpoch
	id := req.MemberID
	if req.InstanceID != nil && w.cg != nil {
		// Kafka's leave by an instance id: it must be the member's.
		id = w.cg.static[*req.InstanceID]
	}
	var m *consumerMember
	if w.cg != nil {
		m = w.cg.members[id]
	}
	switch {
	case m == nil:
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil
	case id != req.MemberID:
		resp.ErrorCode = kerr.FencedInstanceID.Code
		return resp, nil
	case req.MemberEpoch == staticLeaveEpoch:
		left := m.Member
		left.PreviousEpoch, left.Epoch = m.Epoch, staticLeaveEpoch
		left.PendingRevocation = assignor.Assignment{}
		w.write(currentMemberAssignmentKey(w.id, id), currentMemberAssignmentValue(currentAssignmentOf(left)))
		return resp, nil
	}
	return resp, m
}

// fence removes m from the group (it left, or its session or revocation
// time ran out) and moves the group epoch on.
func (w *consumerWrite) fence(m *consumerMember, view TopicsView, now time.Time) {
	w.removeMember(m)
	w.write(consumerGroupMetadataKey(w.id), consumerGroupMetadataValue(w.groupMetadata(w.cg.epoch+1, w.cg.subscriptionHash(view), now)))
}

// requestedMetadata is m's metadata with the client of op, and the
// instance id and rack a request gives (nil: it keeps m's).
func (m *consumerMember) requestedMetadata(op runtime.Op, instanceID, rack *string) memberMetadata {
	meta := m.metadata()
	meta.ClientID, meta.ClientHost = op.ClientID, op.ClientHost
	if instanceID != nil {
		meta.InstanceID = instanceID
	}
	if rack != nil {
		meta.RackID = rack
	}
	return meta
}

// updateMember writes m's metadata if the request changes it (m may be
// new) and reports whether its subscription changed.
func (w *consumerWrite) updateMember(m *consumerMember, op runtime.Op, req *kmsg.ConsumerGroupHeartbeatRequest) bool {
	meta := m.requestedMetadata(op, req.InstanceID, req.RackID)
	meta.Classic = nil // a member that heartbeats speaks the consumer protocol
	if req.RebalanceTimeoutMillis > 0 {
		meta.RebalanceTimeoutMs = req.RebalanceTimeoutMillis
	}
	if req.ServerAssignor != nil {
		meta.ServerAssignor = req.ServerAssignor
	}
	subscriptionChanged := false
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(names)
		names = slices.Compact(names)
		subscriptionChanged = !slices.Equal(names, meta.SubscribedTopicNames)
		meta.SubscribedTopicNames = names
	}
	if req.SubscribedTopicRegex != nil {
		regex := req.SubscribedTopicRegex
		if *regex == "" {
			regex = nil
		}
		subscriptionChanged = subscriptionChanged || !equalPtr(regex, meta.SubscribedTopicRegex)
		meta.SubscribedTopicRegex = regex
	}
	w.putMember(m, meta)
	return subscriptionChanged
}

// groupMetadata is the group's metadata record at epoch, keeping its
// creation time (now for a new group).
func (w *consumerWrite) groupMetadata(epoch int32, hash int64, now time.Time) consumerGroupMetadata {
	v := consumerGroupMetadata{Epoch: epoch, MetadataHash: hash, CreationTimeMs: now.UnixMilli(), HasCreationTime: true}
	if w.cg.hasCreated {
		v.CreationTimeMs = w.cg.created.UnixMilli()
	}
	return v
}

// subscribedIDs reports whether m subscribes to a topic id, by name or
// regular expression, as the view names the topics.
func (w *consumerWrite) subscribedIDs(m *consumerMember, view TopicsView) func(base.TopicID) bool {
	ids := map[base.TopicID]bool{}
	for _, name := range w.cg.subscribedNames(m) {
		if id, _, ok := view.Topic(name); ok {
			ids[id] = true
		}
	}
	return func(id base.TopicID) bool { return ids[id] }
}

// ownedPartitions is what a heartbeat says its member owns; reported is
// false when it says nothing (a null list).
func ownedPartitions(topics []kmsg.ConsumerGroupHeartbeatRequestTopic) (owned assignor.Assignment, reported bool) {
	if topics == nil {
		return nil, false
	}
	l := make([]topicPartitions, len(topics))
	for i, t := range topics {
		l[i] = topicPartitions{TopicID: t.TopicID, Partitions: t.Partitions}
	}
	return assignmentOf(l), true
}

func responseAssignment(a assignor.Assignment) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	out := new(kmsg.ConsumerGroupHeartbeatResponseAssignment)
	out.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
	for _, tp := range topicPartitionsOf(a) {
		t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
		t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
		out.Topics = append(out.Topics, t)
	}
	return out
}

// joiningMember is the reconciliation state of a member joining anew:
// epoch 0, nothing assigned.
func joiningMember() reconcile.Member {
	return reconcile.Member{State: reconcile.Stable, Assigned: assignor.Assignment{}, PendingRevocation: assignor.Assignment{}}
}

func currentAssignmentOf(m reconcile.Member) currentMemberAssignment {
	return currentMemberAssignment{MemberEpoch: m.Epoch, PreviousMemberEpoch: m.PreviousEpoch, State: int8(m.State),
		AssignedPartitions: topicPartitionsOf(m.Assigned), PartitionsPendingRevocation: topicPartitionsOf(m.PendingRevocation)}
}

func sameReconciliation(a, b reconcile.Member) bool {
	return a.Epoch == b.Epoch && a.PreviousEpoch == b.PreviousEpoch && a.State == b.State &&
		a.Assigned.Equal(b.Assigned) && a.PendingRevocation.Equal(b.PendingRevocation)
}

func equalPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// due is the members whose session ended without a heartbeat, whose
// revocation took longer than their rebalance timeout, or, for a classic
// member, whose rejoin or sync did (Kafka's session, rebalance, join and
// sync timers), ascending by id: the caller fences them. A member without
// a session timer (just loaded) gets one from now: its classic session
// timeout, or sessionTimeout. Tick calls it for every group, so a group
// where nothing is due costs one pass over its members and nothing more.
func (cg *consumerGroup) due(sessionTimeout func() time.Duration, timers *timerScan) []*consumerMember {
	now := timers.now
	isDue := func(m *consumerMember) bool {
		// Each timer is scanned, so the soonest ahead is known.
		session, revocation := timers.due(m.session), timers.due(m.revocation)
		join, sync := timers.due(m.classicJoin), timers.due(m.classicSync)
		return session || revocation || join || sync
	}
	anything := false
	for _, m := range cg.members {
		if !m.session.armed || isDue(m) {
			anything = true
			break
		}
	}
	if !anything {
		return nil
	}
	var out []*consumerMember
	for _, id := range cg.memberIDs() {
		m := cg.members[id]
		switch {
		case !m.session.armed && m.classic != nil:
			m.session = armAt(now.Add(millis(m.classic.SessionTimeoutMs)))
		case !m.session.armed:
			m.session = armAt(now.Add(sessionTimeout()))
		case isDue(m):
			out = append(out, m)
		}
	}
	return out
}

// deleteGroup writes the tombstones of every record of the group, in
// Kafka's order (members, regular expressions, the target epoch, then the
// group), after which w.cg is nil. DeleteGroups deletes only an empty
// group (NON_EMPTY_GROUP otherwise); its offsets are the caller's.
func (w *consumerWrite) deleteGroup() {
	for _, id := range w.cg.memberIDs() {
		w.removeMember(w.cg.members[id])
	}
	for _, expr := range slices.Sorted(maps.Keys(w.cg.regexes)) {
		w.write(regularExpressionKey(w.id, expr), nil)
	}
	w.write(targetAssignmentMetadataKey(w.id), nil)
	w.write(consumerGroupMetadataKey(w.id), nil)
}
