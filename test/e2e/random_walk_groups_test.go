package e2e

import (
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// classicMember is a member of a classic consumer group (JoinGroup,
// SyncGroup, Heartbeat, OffsetCommit, LeaveGroup), static when it has an
// instance id. Its leader assigns the walk topic's partitions round robin.
type classicMember struct {
	instance   *string
	memberID   string
	generation int32
	protocol   *string
	leader     bool
	members    []string
	next       int
}

const (
	classicJoin = iota
	classicSync
	classicHeartbeat
	classicCommit
	classicFetch
	classicLeave
	classicDescribe
	classicSteps
)

func newClassicMember(static bool) *classicMember {
	m := &classicMember{generation: -1}
	if static {
		m.instance = kmsg.StringPtr("walk-static")
	}
	return m
}

func (m *classicMember) step(w *walker) {
	switch w.pick(m.next, classicSteps) {
	case classicJoin:
		m.join(w)
	case classicSync:
		m.sync(w)
	case classicHeartbeat:
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID, req.InstanceID = walkClassic, m.generation, m.memberID, m.instance
		if resp, ok := w.send(req).(*kmsg.HeartbeatResponse); ok {
			m.settle(w, resp.ErrorCode)
		}
	case classicCommit:
		req := offsetCommit(w, walkClassic, m.generation, m.memberID, m.instance)
		if resp, ok := w.send(req).(*kmsg.OffsetCommitResponse); ok && len(resp.Topics) > 0 && len(resp.Topics[0].Partitions) > 0 {
			m.settle(w, resp.Topics[0].Partitions[0].ErrorCode)
		}
	case classicFetch:
		w.send(offsetFetch(w, walkClassic, nil, -1))
		m.next = classicHeartbeat
	case classicLeave:
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Group, req.MemberID = walkClassic, m.memberID
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID, lm.InstanceID, lm.Reason = m.memberID, m.instance, kmsg.StringPtr("walking away")
		req.Members = append(req.Members, lm)
		w.send(req)
		m.memberID, m.generation, m.next = "", -1, classicJoin
	case classicDescribe:
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups, req.IncludeAuthorizedOperations = []string{walkClassic}, w.oneIn(2)
		w.send(req)
	}
}

func (m *classicMember) join(w *walker) {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID, req.InstanceID = walkClassic, m.memberID, m.instance
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = int32(1500+w.rng.IntN(1500)), int32(300+w.rng.IntN(700))
	req.ProtocolType = "consumer"
	for _, name := range []string{"range", "roundrobin"}[:1+w.rng.IntN(2)] {
		meta := kmsg.NewConsumerMemberMetadata()
		meta.Topics = []string{walkTopic}
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = name, meta.AppendTo(nil)
		req.Protocols = append(req.Protocols, p)
	}
	resp, ok := w.send(req).(*kmsg.JoinGroupResponse)
	if req.GetVersion() < 5 {
		// JoinGroup carries an instance id from v5 (KIP-345): below,
		// the member joined as a dynamic one, and naming the instance
		// in its SyncGroup or Heartbeat would only be answered
		// UNKNOWN_MEMBER_ID, as Kafka answers it (walk seed 7002).
		m.instance = nil
	}
	if !ok || w.mutated && resp.ErrorCode != 0 {
		return // a mutated join's refusal says nothing of the member (settle)
	}
	switch kerr.ErrorForCode(resp.ErrorCode) {
	case nil:
		m.memberID, m.generation, m.protocol = resp.MemberID, resp.Generation, resp.Protocol
		m.leader = resp.LeaderID == resp.MemberID
		m.members = m.members[:0]
		for _, jm := range resp.Members {
			m.members = append(m.members, jm.MemberID)
		}
		m.next = classicSync
	case kerr.MemberIDRequired:
		m.memberID = resp.MemberID
	case kerr.UnknownMemberID:
		m.memberID = ""
	}
}

// sync sends SyncGroup; the leader's carries every member's partitions.
func (m *classicMember) sync(w *walker) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = walkClassic, m.generation, m.memberID, m.instance
	req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), m.protocol
	if m.leader {
		for i, member := range m.members {
			assignment := kmsg.NewConsumerMemberAssignment()
			at := kmsg.NewConsumerMemberAssignmentTopic()
			at.Topic = walkTopic
			for p := int32(i); p < walkPartitions; p += int32(len(m.members)) {
				at.Partitions = append(at.Partitions, p)
			}
			assignment.Topics = append(assignment.Topics, at)
			a := kmsg.NewSyncGroupRequestGroupAssignment()
			a.MemberID, a.MemberAssignment = member, assignment.AppendTo(nil)
			req.GroupAssignment = append(req.GroupAssignment, a)
		}
	}
	if resp, ok := w.send(req).(*kmsg.SyncGroupResponse); ok {
		m.settle(w, resp.ErrorCode)
	}
}

// settle moves the member on after an answer about its membership:
// heartbeats, commits and offset reads while it holds, a new join when the
// group rebalances or forgot it. The answer to a mutated request may be
// about another member or group: the member then asks again with a
// heartbeat rather than give up a membership it may still hold, which
// would leave it in the group until its session ends and, with a
// protocol no other walker names, keep them all out (walk seed 7002).
func (m *classicMember) settle(w *walker, code int16) {
	if w.mutated {
		m.next = classicHeartbeat
		return
	}
	switch kerr.ErrorForCode(code) {
	case nil:
		m.next = []int{classicHeartbeat, classicHeartbeat, classicCommit, classicFetch}[w.rng.IntN(4)]
		if w.oneIn(12) {
			m.next = classicLeave
		}
	case kerr.UnknownMemberID, kerr.FencedInstanceID:
		m.memberID, m.next = "", classicJoin
	default:
		m.next = classicJoin
	}
}

// consumerMember is a member of a KIP-848 consumer group: heartbeats that
// join, hold and leave, offset commits and fetches at its member epoch.
type consumerMember struct {
	instance *string
	memberID string
	epoch    int32
	// rebalance is the rebalance timeout the member last sent: within it
	// it must acknowledge a revocation, or the coordinator fences it.
	rebalance time.Duration
	owned     []kmsg.ConsumerGroupHeartbeatRequestTopic // what the last assignment gave
	next      int
}

const (
	cgHeartbeat = iota
	cgCommit
	cgFetch
	cgLeave
	cgDescribe
	cgSteps
)

func newConsumerMember(static bool) *consumerMember {
	m := &consumerMember{}
	if static {
		m.instance = kmsg.StringPtr("walk-consumer-static")
	}
	return m
}

func (m *consumerMember) step(w *walker) {
	if m.memberID == "" {
		m.memberID = walkMember(w.rng)
	}
	switch w.pick(m.next, cgSteps) {
	case cgHeartbeat:
		m.heartbeat(w)
	case cgCommit:
		req := offsetCommit(w, walkConsumer, m.epoch, m.memberID, m.instance)
		w.send(req)
		m.next = cgHeartbeat
	case cgFetch:
		w.send(offsetFetch(w, walkConsumer, &m.memberID, m.epoch))
		m.next = cgHeartbeat
	case cgLeave:
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.InstanceID, req.MemberEpoch = walkConsumer, m.memberID, m.instance, -1
		if m.instance != nil && w.oneIn(2) {
			req.MemberEpoch = -2 // a static member's temporary leave
		}
		w.env.owners.release(w.name)
		w.send(req)
		m.epoch, m.owned, m.next = 0, nil, cgHeartbeat
	case cgDescribe:
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups, req.IncludeAuthorizedOperations = []string{walkConsumer}, w.oneIn(2)
		w.send(req)
	}
}

// heartbeat joins (epoch 0: subscription and rebalance timeout, owning
// nothing) or holds (the partitions it owns, which tells the coordinator
// it took its assignment), now and then changing the subscription.
func (m *consumerMember) heartbeat(w *walker) {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.InstanceID, req.MemberEpoch = walkConsumer, m.memberID, m.instance, m.epoch
	req.RebalanceTimeoutMillis, req.Topics = -1, m.owned
	if m.epoch == 0 {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	if m.epoch == 0 || w.oneIn(6) {
		req.RebalanceTimeoutMillis = int32(1000 + w.rng.IntN(2000))
		m.rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
		switch w.rng.IntN(3) {
		case 0:
			req.SubscribedTopicRegex = kmsg.StringPtr("walk.*")
		default:
			req.SubscribedTopicNames = []string{walkTopic}
		}
		req.ServerAssignor = []*string{nil, kmsg.StringPtr("uniform"), kmsg.StringPtr("range")}[w.rng.IntN(3)]
	}
	w.onMutate = func() { w.env.owners.release(w.name) }
	resp, ok := w.send(req).(*kmsg.ConsumerGroupHeartbeatResponse)
	w.onMutate = nil
	if !ok || w.mutated || resp.ErrorCode != 0 {
		w.env.owners.release(w.name) // what the coordinator holds of it is unknown
	}
	if !ok {
		return
	}
	switch kerr.ErrorForCode(resp.ErrorCode) {
	case nil:
		if resp.MemberID != nil && !w.mutated { // a mutated id may be another walker's
			m.memberID = *resp.MemberID
		}
		if req.RebalanceTimeoutMillis > 0 && req.MemberID == m.memberID {
			// The coordinator takes the timeout sent, a mutated one too
			// (seed 824: 25 ms, and a revocation fenced the member).
			m.rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
		}
		m.epoch = resp.MemberEpoch
		if !w.mutated {
			w.env.owners.heard(w.name, m.rebalance)
		}
		if a := resp.Assignment; a != nil {
			m.owned = m.owned[:0:0]
			for _, at := range a.Topics {
				rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
				rt.TopicID, rt.Partitions = at.TopicID, at.Partitions
				m.owned = append(m.owned, rt)
			}
			if !w.mutated {
				if p, other, taken := w.env.owners.assign(w.name, m.owned, m.rebalance); taken {
					w.fail("%s (seed %d): ConsumerGroupHeartbeat assigned it %s, which %s still owns (it never heard of the revocation): %s -> %s\n%s's journal:\n%s\n%s's journal:\n%s",
						w.name, w.env.seed, p, other, requestJSON(req), requestJSON(resp), other, w.env.journalOf(other), w.name, w.env.journalOf(w.name))
				}
			}
		}
		m.next = []int{cgHeartbeat, cgHeartbeat, cgCommit, cgFetch}[w.rng.IntN(4)]
		if w.oneIn(12) {
			m.next = cgLeave
		}
	case kerr.UnknownMemberID, kerr.FencedMemberEpoch:
		m.epoch, m.owned = 0, nil
	case kerr.UnreleasedInstanceID:
		m.memberID, m.epoch, m.owned = walkMember(w.rng), 0, nil
	}
}

// offsetCommit commits a small offset for each partition of the walk
// topic, by name and by id (the request's version picks which is sent).
func offsetCommit(w *walker, group string, generation int32, member string, instance *string) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = group, generation, member, instance
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = walkTopic, w.env.topicID
	for p := range int32(walkPartitions) {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, w.rng.Int64N(10)
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// offsetFetch reads group's offsets of the walk topic, in the request's
// old form and its v8+ form (with a member and epoch from v9).
func offsetFetch(w *walker, group string, member *string, epoch int32) *kmsg.OffsetFetchRequest {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group, req.RequireStable = group, w.oneIn(2)
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = walkTopic, []int32{0, 1, 2}
	req.Topics = append(req.Topics, rt)
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group, g.MemberID, g.MemberEpoch = group, member, epoch
	gt := kmsg.NewOffsetFetchRequestGroupTopic()
	gt.Topic, gt.TopicID, gt.Partitions = walkTopic, w.env.topicID, []int32{0, 1, 2}
	g.Topics = append(g.Topics, gt)
	req.Groups = append(req.Groups, g)
	return req
}

// partitionOwners is who owns each partition of the KIP-848 group, as the
// consumer members know it: a member owns what its last assignment gave
// it until it leaves, is fenced, or sends what the walk cannot be sure of.
// The coordinator gives a partition to a member only once its previous
// owner has acknowledged the revocation, which that owner does only after
// its assignment dropped the partition: a partition assigned while
// another member still holds it would be consumed twice at once. Unless
// the owner has not been heard from for its rebalance timeout: then the
// coordinator may have fenced it for not revoking in time (between the
// walks' phases, always), and the partition is free.
type partitionOwners struct {
	mu    sync.Mutex
	owner map[string]string // "topic id/partition" → walker
	// lastHeard is when each walker's last clean answer came, and within
	// what rebalance timeout it must answer a revocation.
	lastHeard map[string]heardAt
}

// heard notes a clean answer to walker's heartbeat.
func (o *partitionOwners) heard(walker string, rebalance time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lastHeard == nil {
		o.lastHeard = map[string]heardAt{}
	}
	o.lastHeard[walker] = heardAt{time.Now(), rebalance}
}

type heardAt struct {
	at        time.Time
	rebalance time.Duration
}

func (o *partitionOwners) release(walker string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for p, w := range o.owner {
		if w == walker {
			delete(o.owner, p)
		}
	}
}

// assign makes walker the owner of owned, instead of what it owned
// before, and reports a partition another walker owns and answers for.
func (o *partitionOwners) assign(walker string, owned []kmsg.ConsumerGroupHeartbeatRequestTopic, rebalance time.Duration) (partition, other string, taken bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.owner == nil {
		o.owner = map[string]string{}
	}
	now := time.Now()
	for p, w := range o.owner {
		if w == walker {
			delete(o.owner, p)
		}
	}
	for _, t := range owned {
		for _, p := range t.Partitions {
			key := fmt.Sprintf("%x/%d", t.TopicID, p)
			if w, ok := o.owner[key]; ok && w != walker {
				if h := o.lastHeard[w]; now.Sub(h.at) < h.rebalance {
					return key, w, true
				}
			}
			o.owner[key] = walker
		}
	}
	return "", "", false
}
