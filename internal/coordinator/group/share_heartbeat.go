package group

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// maxShareMemberIDBytes bounds a share member's id, which the client
// chooses (Kafka 4.2's check: a UUID's 36 characters at most).
const maxShareMemberIDBytes = 36

// shareWrite is what one request writes for share group id: each record is
// applied to the group as it is written (consumerWrite's discipline).
type shareWrite struct {
	id      string
	sg      *shareGroup // nil once a tombstone deleted the group
	records []runtime.Record
}

func (w *shareWrite) write(key, value []byte) {
	k, err := readConsumerKey(key)
	if err == nil {
		w.sg, err = replayShare(w.sg, k, value)
	}
	if err != nil {
		panic(fmt.Sprintf("group: share group %q: a record of ours does not apply: %v", w.id, err))
	}
	w.records = append(w.records, runtime.Record{Key: key, Value: value})
}

// validateShareHeartbeat is Kafka's throwIfShareGroupHeartbeatRequestIsInvalid
// (and 4.2's member id check), with its messages.
func validateShareHeartbeat(req *kmsg.ShareGroupHeartbeatRequest) heartbeatRefusal {
	invalid := func(msg string) heartbeatRefusal { return heartbeatRefusal{kerr.InvalidRequest.Code, msg} }
	switch {
	case strings.TrimSpace(req.MemberID) == "":
		return invalid("MemberId can't be empty.")
	case len(req.MemberID) > maxShareMemberIDBytes:
		return invalid(fmt.Sprintf("MemberId is longer than %d characters.", maxShareMemberIDBytes))
	case strings.TrimSpace(req.GroupID) == "":
		return invalid("GroupId can't be empty.")
	case req.RackID != nil && strings.TrimSpace(*req.RackID) == "":
		return invalid("RackId can't be empty.")
	case req.MemberEpoch == joinEpoch && len(req.SubscribedTopicNames) == 0:
		return invalid("SubscribedTopicNames must be set in first request.")
	case req.MemberEpoch < leaveEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	return heartbeatRefusal{}
}

// shareGroupHeartbeat is Kafka's shareGroupHeartbeat: a member of a share
// group joins (epoch 0, creating the group), heartbeats or leaves (-1).
// The group epoch moves on when a subscription or the subscribed topics
// change or a member comes or goes; the target is then assigned again
// (assignor.Simple) and each member takes its target at its next
// heartbeat: share groups have no revocation, a partition may be read by
// several members.
func (c *Coordinator) shareGroupHeartbeat(op runtime.Op, req *kmsg.ShareGroupHeartbeatRequest, now time.Time, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	refuse := func(r heartbeatRefusal) {
		resp.ErrorCode, resp.ErrorMessage = r.code, &r.message
		reply(res, op.Token, resp)
	}
	if r := validateShareHeartbeat(req); r.code != 0 {
		refuse(r)
		return
	}
	if g, ok := c.groups[req.GroupID]; ok && !g.garbage() {
		refuse(heartbeatRefusal{kerr.GroupIDNotFound.Code, fmt.Sprintf("Group %s is not a share group.", req.GroupID)})
		return
	}
	sg := c.shares[req.GroupID]
	if sg == nil && req.MemberEpoch != joinEpoch {
		refuse(heartbeatRefusal{kerr.GroupIDNotFound.Code, fmt.Sprintf("Share group %s not found.", req.GroupID)})
		return
	}
	if sg == nil {
		sg = newShareGroup()
	}
	w := shareWrite{id: req.GroupID, sg: sg}
	var refusal heartbeatRefusal
	if req.MemberEpoch == leaveEpoch {
		refusal = w.leave(req.MemberID)
		resp.MemberID, resp.MemberEpoch = &req.MemberID, leaveEpoch
	} else {
		refusal = w.heartbeat(op, req, resp, c.opts.Topics(), c.shareSettings(req.GroupID), now)
	}
	if refusal.code != 0 {
		refuse(refusal)
		return
	}
	c.applyShareWrite(&w, res)
	reply(res, op.Token, resp)
}

// applyShareWrite keeps what w wrote: its records and the group after them.
func (c *Coordinator) applyShareWrite(w *shareWrite, res *runtime.Result) {
	if len(w.records) == 0 {
		return
	}
	res.Records = append(res.Records, w.records...)
	if w.sg == nil {
		delete(c.shares, w.id)
		return
	}
	c.shares[w.id] = w.sg
}

// heartbeat serves a join or a heartbeat of a member that stays.
func (w *shareWrite) heartbeat(op runtime.Op, req *kmsg.ShareGroupHeartbeatRequest, resp *kmsg.ShareGroupHeartbeatResponse, view TopicsView, set shareSettings, now time.Time) heartbeatRefusal {
	m, known := w.sg.members[req.MemberID]
	switch {
	case !known && len(w.sg.members) >= set.maxSize:
		return heartbeatRefusal{kerr.GroupMaxSizeReached.Code, fmt.Sprintf("The share group has reached its maximum capacity of %d members.", set.maxSize)}
	case !known && req.MemberEpoch != joinEpoch:
		return heartbeatRefusal{kerr.UnknownMemberID.Code, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, w.id)}
	case known && req.MemberEpoch != joinEpoch && req.MemberEpoch != m.epoch && req.MemberEpoch != m.previousEpoch:
		return heartbeatRefusal{kerr.FencedMemberEpoch.Code, fmt.Sprintf("The share group member has an epoch (%d) the coordinator does not know (%d).", req.MemberEpoch, m.epoch)}
	}
	var before assignor.Assignment
	var meta shareMemberMetadata
	if known {
		before, meta = m.assigned, m.metadata()
	}
	if req.RackID != nil {
		meta.RackID = req.RackID
	}
	if req.SubscribedTopicNames != nil {
		meta.SubscribedTopicNames = sortedSet(req.SubscribedTopicNames)
	}
	meta.ClientID, meta.ClientHost = op.ClientID, op.ClientHost
	subscriptionChanged := !known || !slices.Equal(meta.SubscribedTopicNames, m.topics)
	if !known || !meta.equal(m.metadata()) {
		w.write(shareMemberMetadataKey(w.id, req.MemberID), shareMemberMetadataValue(meta))
	}
	w.advance(view, subscriptionChanged, now)
	m = w.sg.members[req.MemberID]
	w.reconcile(m, view, subscriptionChanged)

	m.session = armAt(now.Add(set.sessionTimeout))
	resp.MemberID, resp.MemberEpoch = &m.id, m.epoch
	resp.HeartbeatIntervalMillis = int32(set.heartbeatInterval.Milliseconds())
	if req.MemberEpoch == joinEpoch || req.SubscribedTopicNames != nil || !m.assigned.Equal(before) {
		resp.Assignment = shareResponseAssignment(m.assigned)
	}
	return heartbeatRefusal{}
}

// advance bumps the group epoch when a subscription or the subscribed
// topics changed, and assigns the target when it is behind the epoch.
func (w *shareWrite) advance(view TopicsView, subscriptionChanged bool, now time.Time) {
	if hash := topicsHash(view, w.sg.subscribedNames()); subscriptionChanged || hash != w.sg.metadataHash {
		w.write(shareGroupMetadataKey(w.id), shareGroupMetadataValue(shareGroupMetadata{Epoch: w.sg.epoch + 1, MetadataHash: hash}))
	}
	if w.sg.epoch > w.sg.assignmentEpoch {
		w.assignTargets(view, now)
	}
}

// assignTargets writes the target of the group's epoch: the partitions
// whose state it may create first (ShareGroupStatePartitionMetadata, when
// the target holds new ones), then the members whose target changed, then
// the target epoch.
func (w *shareWrite) assignTargets(view TopicsView, now time.Time) {
	sg := w.sg
	next := assignor.Simple{}.Assign(sg.assignmentSpec(view))
	w.noteStateTopics(view, next, now)
	for _, id := range sg.memberIDs() {
		if target := next[id]; !target.Equal(sg.targets[id]) {
			w.write(shareTargetAssignmentMemberKey(w.id, id), targetAssignmentMemberValue(targetAssignmentMember{TopicPartitions: topicPartitionsOf(target)}))
		}
	}
	w.write(shareTargetAssignmentMetadataKey(w.id), targetAssignmentMetadataValue(targetAssignmentMetadata{AssignmentEpoch: sg.epoch}))
}

// noteStateTopics adds the partitions of targets to the group's state
// partitions.
func (w *shareWrite) noteStateTopics(view TopicsView, targets map[string]assignor.Assignment, now time.Time) {
	added := map[base.TopicID]shareTopicPartitions{}
	for _, a := range targets {
		for id, ps := range a {
			name, _ := view.TopicName(id)
			added[id] = mergeStateTopic(added[id], shareTopicPartitions{TopicID: id, TopicName: name, Partitions: ps, CreateTimestampMs: now.UnixMilli()})
		}
	}
	w.putStateTopics(added)
}

// reconcile gives m its target when its epoch is behind the target's, or
// when its subscription changed (the target restricted to what it
// subscribes to), and writes its assignment if that moved.
func (w *shareWrite) reconcile(m *shareMember, view TopicsView, subscriptionChanged bool) {
	epoch, previous := m.epoch, m.previousEpoch
	if w.sg.assignmentEpoch != m.epoch {
		epoch, previous = w.sg.assignmentEpoch, m.epoch
	} else if !subscriptionChanged {
		return
	}
	assigned := restrictTo(w.sg.targets[m.id], subscribedIDs(view, m.topics))
	if epoch == m.epoch && previous == m.previousEpoch && assigned.Equal(m.assigned) {
		return
	}
	w.write(shareCurrentMemberAssignmentKey(w.id, m.id), shareCurrentMemberAssignmentValue(shareCurrentMemberAssignment{
		MemberEpoch: epoch, PreviousMemberEpoch: previous, State: shareMemberStable, AssignedPartitions: topicPartitionsOf(assigned),
	}))
}

// leave removes a member (a leave, or its session's end): its assignment,
// target and metadata, then the group epoch moves on.
func (w *shareWrite) leave(memberID string) heartbeatRefusal {
	if _, ok := w.sg.members[memberID]; !ok {
		return heartbeatRefusal{kerr.UnknownMemberID.Code, fmt.Sprintf("Member %s is not a member of group %s.", memberID, w.id)}
	}
	w.write(shareCurrentMemberAssignmentKey(w.id, memberID), nil)
	if _, ok := w.sg.targets[memberID]; ok {
		w.write(shareTargetAssignmentMemberKey(w.id, memberID), nil)
	}
	w.write(shareMemberMetadataKey(w.id, memberID), nil)
	w.write(shareGroupMetadataKey(w.id), shareGroupMetadataValue(shareGroupMetadata{Epoch: w.sg.epoch + 1, MetadataHash: w.sg.metadataHash}))
	return heartbeatRefusal{}
}

// assignmentSpec is the assignor's input: every member, ascending by id,
// with the existing topics it subscribes to and its current target.
func (sg *shareGroup) assignmentSpec(view TopicsView) assignor.Spec {
	spec := assignor.Spec{Topics: map[base.TopicID]assignor.Topic{}}
	for _, id := range sg.memberIDs() {
		m := sg.members[id]
		subs := subscribedIDs(view, m.topics)
		for _, tid := range subs {
			name, _ := view.TopicName(tid)
			_, partitions, _ := view.Topic(name)
			spec.Topics[tid] = assignor.Topic{Name: name, Partitions: partitions}
		}
		spec.Members = append(spec.Members, assignor.Member{ID: id, Subscribed: subs, Current: sg.targets[id]})
	}
	return spec
}

func (sg *shareGroup) memberIDs() []string {
	ids := make([]string, 0, len(sg.members))
	for id := range sg.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// subscribedIDs is the ids of the existing topics among names, ascending.
func subscribedIDs(view TopicsView, names []string) []base.TopicID {
	var ids []base.TopicID
	for _, name := range names {
		if tid, _, ok := view.Topic(name); ok {
			ids = append(ids, tid)
		}
	}
	slices.SortFunc(ids, func(a, b base.TopicID) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(ids)
}

// restrictTo is the part of a whose topics are in topics.
func restrictTo(a assignor.Assignment, topics []base.TopicID) assignor.Assignment {
	out := assignor.Assignment{}
	for _, t := range topics {
		if ps := a[t]; len(ps) > 0 {
			out[t] = slices.Clone(ps)
		}
	}
	return out
}

func shareResponseAssignment(a assignor.Assignment) *kmsg.ShareGroupHeartbeatResponseAssignment {
	out := kmsg.NewShareGroupHeartbeatResponseAssignment()
	out.TopicPartitions = []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}
	for _, tp := range topicPartitionsOf(a) {
		p := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
		p.TopicID, p.Partitions = tp.TopicID, tp.Partitions
		out.TopicPartitions = append(out.TopicPartitions, p)
	}
	return &out
}

// tickShare ends the members whose session passed, as leaves, and arms the
// sessions of members just loaded.
func (c *Coordinator) tickShare(id string, sg *shareGroup, now time.Time, res *runtime.Result) {
	var due []string
	for _, mid := range sg.memberIDs() {
		m := sg.members[mid]
		switch {
		case !m.session.armed:
			m.session = armAt(now.Add(c.shareSettings(id).sessionTimeout))
		case c.timers.due(m.session):
			due = append(due, mid)
		}
	}
	if len(due) == 0 {
		return
	}
	w := shareWrite{id: id, sg: sg}
	for _, mid := range due {
		w.leave(mid)
	}
	c.applyShareWrite(&w, res)
}
