package group

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// model is what the property test remembers of the members it drives.
type model struct {
	ids  map[string]string // "group/slot" → the member id last handed out
	gens map[string]int32  // group → highest generation seen in the coordinator
	// consumers are the consumer-protocol members, by "group/slot": what
	// each last heard of its epoch and assignment.
	consumers map[string]*cgClient
	// shares are the share group members, by "group/slot".
	shares map[string]*shareClient
	// topics is the incarnation of each churned topic (churnedNames);
	// created counts the incarnations.
	topics  map[string]int
	created int
}

func TestPropertyRandomOps(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		opts := testOptions()
		opts.Random = rand.NewChaCha8([32]byte{byte(rapid.IntRange(0, 255).Draw(rt, "seed"))})
		opts.InitialRebalanceDelay = rapid.SampledFrom([]time.Duration{0, 3 * time.Second}).Draw(rt, "delay")
		opts.MaxSize = rapid.IntRange(1, 4).Draw(rt, "maxSize")
		opts.OffsetsRetention = time.Hour
		opts.OffsetsRetentionCheckInterval = time.Minute
		opts.ProducerIDExpiration = rapid.SampledFrom([]time.Duration{time.Hour, 1000 * time.Hour}).Draw(rt, "producerExpiration")
		m := &model{ids: map[string]string{}, gens: map[string]int32{}, consumers: map[string]*cgClient{}, shares: map[string]*shareClient{},
			topics: map[string]int{"t": 1, "u": 2}, created: 2}
		opts.Topics = m.view
		h := newHarness(rt, opts)
		h.advance(0) // the coordinator sees the topics before any commit
		steps := rapid.IntRange(1, 120).Draw(rt, "steps")
		for range steps {
			step(rt, h, m)
			checkInvariants(rt, h.c)
			for id, g := range h.c.groups {
				if g.consumer != nil {
					delete(m.gens, id) // a classic group again starts over
					continue
				}
				if prev, ok := m.gens[id]; ok && g.generation < prev {
					rt.Fatalf("group %s: generation went from %d to %d", id, prev, g.generation)
				}
				m.gens[id] = g.generation
			}
			for id := range m.gens {
				if _, ok := h.c.groups[id]; !ok {
					delete(m.gens, id) // deleted groups start over
				}
			}
		}
		// Every op is answered once the timers have run out.
		for range 10 {
			h.advance(time.Minute)
		}
		for tok, req := range h.issued {
			if !h.answered(tok) {
				rt.Fatalf("op %d (%T) never answered", tok, req)
			}
		}
		reloaded := replayAll(rt, opts, h.records)
		live, loaded := snapshotOf(h.c), snapshotOf(reloaded)
		if fmt.Sprint(live) != fmt.Sprint(loaded) {
			rt.Fatalf("replay differs:\nlive   %v\nloaded %v", live, loaded)
		}
		checkInvariants(rt, reloaded)
		checkProducersReplay(rt, h, reloaded)
	})
}

// checkProducersReplay compares the fencing state. Until a producer could
// have expired it must be equal. After that the live coordinator may have
// forgotten idle producers that a reload still knows (a reload restarts
// their period at its first tick), and may know them again, less
// informed, from later writes: then the reload must know at least as
// high an epoch and the same pending groups.
func checkProducersReplay(rt *rapid.T, h *harness, reloaded *Coordinator) {
	liveP, loadedP := producersOf(h.c), producersOf(reloaded)
	if h.now.Sub(t0) < h.c.opts.ProducerIDExpiration {
		if !maps.Equal(liveP, loadedP) {
			rt.Fatalf("producers differ:\nlive   %v\nloaded %v", liveP, loadedP)
		}
		return
	}
	for id, lp := range h.c.producers {
		p, ok := reloaded.producers[id]
		if !ok || p.epoch < lp.epoch || !maps.Equal(p.groups, lp.groups) {
			rt.Fatalf("producer %d: live %s, loaded %s", id, liveP[id], loadedP[id])
		}
	}
	for id, p := range reloaded.producers {
		if _, ok := h.c.producers[id]; !ok && len(p.groups) > 0 {
			rt.Fatalf("producer %d with pending offsets is gone live", id)
		}
	}
}

func step(rt *rapid.T, h *harness, m *model) {
	group := rapid.SampledFrom([]string{"g1", "g2"}).Draw(rt, "group")
	slot := rapid.IntRange(0, 3).Draw(rt, "slot")
	key := fmt.Sprintf("%s/%d", group, slot)
	id := m.ids[key]
	if rapid.IntRange(0, 9).Draw(rt, "stale") == 0 {
		id = "stale-" + id
	}
	var instance *string
	if slot == 3 {
		instance = kmsg.StringPtr("static-" + group)
	}
	gen := m.gens[group] + int32(rapid.IntRange(-1, 1).Draw(rt, "genSkew"))
	client := fmt.Sprintf("client-%d", slot)
	switch rapid.IntRange(0, 23).Draw(rt, "op") {
	case 23:
		churnStep(rt, h, m)
	case 20, 21, 22:
		// Share groups: mostly their own ids, sometimes a classic or
		// consumer group's (refused while that group exists).
		if rapid.IntRange(0, 3).Draw(rt, "shareOwnID") > 0 {
			group = "s" + group
		}
		shareStep(rt, h, m, group, fmt.Sprintf("%s/%d", group, slot), client)
	case 0, 1:
		protocols := rapid.SampledFrom([][]string{{"range"}, {"range", "rr"}, {"rr"}}).Draw(rt, "protocols")
		req := joinReq(group, id, instance, protocols...)
		req.Version = int16(rapid.SampledFrom([]int{3, 5, 9}).Draw(rt, "joinVersion"))
		if rapid.Bool().Draw(rt, "fresh") {
			req.MemberID = ""
		}
		tok := h.do(req, client)
		if r, ok := h.replies[tok].(*kmsg.JoinGroupResponse); ok && r.MemberID != "" {
			m.ids[key] = r.MemberID
		}
	case 2:
		// Consumer-protocol assignments, or bytes an upgrade cannot read.
		parsable := rapid.Bool().Draw(rt, "parsable")
		assign := map[string][]byte{}
		for s := range 4 {
			if mid := m.ids[fmt.Sprintf("%s/%d", group, s)]; mid != "" {
				assign[mid] = []byte{byte(s)}
				if parsable {
					assign[mid] = classicAssignmentOf(int32(s))
				}
			}
		}
		req := syncReq(group, id, gen, assign)
		req.InstanceID = instance
		h.do(req, client)
	case 3, 4:
		req := heartbeatReq(group, id, gen)
		req.InstanceID = instance
		h.do(req, client)
	case 5:
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version = 3
		req.Group = group
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id, InstanceID: instance}}
		h.do(req, client)
	case 6:
		if rapid.Bool().Draw(rt, "simple") {
			m.commit(h, commitReq(group, "", -1, "t", int64(rapid.IntRange(0, 100).Draw(rt, "offset"))), client)
		} else {
			req := commitReq(group, id, gen, rapid.SampledFrom([]string{"t", "u"}).Draw(rt, "topic"), int64(rapid.IntRange(0, 100).Draw(rt, "offset")))
			req.InstanceID = instance
			m.commit(h, req, client)
		}
	case 7:
		fetch := fetchV7(group, nil)
		fetch.RequireStable = rapid.Bool().Draw(rt, "stable")
		h.do(fetch, client)
		d := kmsg.NewPtrDescribeGroupsRequest()
		d.Groups = []string{group}
		h.do(d, client)
		h.do(kmsg.NewPtrListGroupsRequest(), client)
	case 8:
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{group}
		h.do(req, client)
	case 9:
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = group
		req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: rapid.SampledFrom([]string{"t", "u"}).Draw(rt, "delTopic"), Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
		h.do(req, client)
	case 10, 11:
		h.advance(rapid.SampledFrom([]time.Duration{0, time.Second, 5 * time.Second, 11 * time.Second, 31 * time.Second, 2 * time.Hour}).Draw(rt, "advance"))
	case 12, 13:
		// Transactional commits to the same partitions as the plain ones.
		pid := int64(rapid.IntRange(1, 2).Draw(rt, "pid"))
		req := txnCommitReq(group, pid, drawEpoch(rt, h, pid), rapid.SampledFrom([]string{"t", "u"}).Draw(rt, "txnTopic"), int64(rapid.IntRange(0, 100).Draw(rt, "txnOffset")))
		req.Version = int16(rapid.SampledFrom([]int{0, 2, 3, 4}).Draw(rt, "txnVersion"))
		if req.Version >= 3 && rapid.Bool().Draw(rt, "asMember") {
			req.MemberID, req.Generation, req.InstanceID = id, gen, instance
		}
		m.commit(h, req, client)
	case 14:
		pid := int64(rapid.IntRange(1, 2).Draw(rt, "endPid"))
		coordinatorEpoch := int32(0)
		if p := h.c.producers[pid]; p != nil {
			coordinatorEpoch = p.coordinatorEpoch
		}
		coordinatorEpoch = max(0, coordinatorEpoch+int32(rapid.IntRange(-1, 1).Draw(rt, "coordinatorSkew")))
		h.event(TxnCompleted{ProducerID: pid, ProducerEpoch: drawEpoch(rt, h, pid), Commit: rapid.Bool().Draw(rt, "commit"), CoordinatorEpoch: coordinatorEpoch})
	default:
		consumerStep(rt, h, m, group, key, instance, client)
	}
}

// consumerStep drives a consumer-protocol member (KIP-848) of group: a
// join, a heartbeat that reports what it owns (or not, or at a stale
// epoch), a leave (static for the static slot), a commit at its epoch,
// and the group's description.
func consumerStep(rt *rapid.T, h *harness, m *model, group, key string, instance *string, client string) {
	c := m.consumers[key]
	if c == nil {
		c = &cgClient{id: "c-" + key}
		m.consumers[key] = c
	}
	epoch := c.epoch
	if rapid.IntRange(0, 9).Draw(rt, "staleEpoch") == 0 {
		epoch++
	}
	var req *kmsg.ConsumerGroupHeartbeatRequest
	switch rapid.IntRange(0, 4).Draw(rt, "consumerOp") {
	case 0:
		req = cgJoinReq(group, c.id, rapid.SampledFrom([][]string{{"t1"}, {"t2"}, {"t1", "t2"}}).Draw(rt, "subscription")...)
		req.InstanceID = instance
	case 1, 2:
		owned := c.owned
		if rapid.Bool().Draw(rt, "silent") {
			owned = nil
		} else if owned == nil {
			owned = assignor.Assignment{}
		}
		req = cgBeatReq(group, c.id, epoch, owned)
	case 3:
		leave := int32(leaveEpoch)
		if instance != nil && rapid.Bool().Draw(rt, "staticLeave") {
			leave = staticLeaveEpoch
		}
		req = cgBeatReq(group, c.id, leave, nil)
		req.InstanceID = instance
	case 4:
		m.commit(h, offsetCommitV9(group, c.id, epoch, rapid.SampledFrom([]string{"t1", "t"}).Draw(rt, "cgTopic"), int64(rapid.IntRange(0, 100).Draw(rt, "cgOffset"))), client)
		d := kmsg.NewPtrConsumerGroupDescribeRequest()
		d.Groups = []string{group}
		h.do(d, client)
		return
	}
	resp := h.resp(h.do(req, client)).(*kmsg.ConsumerGroupHeartbeatResponse)
	switch {
	case resp.ErrorCode != 0:
		if resp.ErrorCode == kerr.FencedMemberEpoch.Code || resp.ErrorCode == kerr.UnknownMemberID.Code {
			c.epoch, c.owned = 0, nil // it must join again
		}
	case req.MemberEpoch < 0:
		c.epoch, c.owned = 0, nil
	default:
		c.epoch = resp.MemberEpoch
		if a := assigned(resp); a != nil {
			c.owned = a
		}
	}
}

// shareStep drives a share group member: a join with a subscription, a
// heartbeat (sometimes at a stale epoch, sometimes changing its
// subscription), a leave, or the group's description, or its deletion.
func shareStep(rt *rapid.T, h *harness, m *model, group, key, client string) {
	c := m.shares[key]
	if c == nil {
		c = &shareClient{id: "s-" + key}
		m.shares[key] = c
	}
	epoch := c.epoch
	if rapid.IntRange(0, 9).Draw(rt, "shareStaleEpoch") == 0 {
		epoch++
	}
	subscription := rapid.SampledFrom([][]string{{"t1"}, {"t2"}, {"t1", "t2"}, {"t3"}}).Draw(rt, "shareSubscription")
	var req *kmsg.ShareGroupHeartbeatRequest
	switch rapid.IntRange(0, 4).Draw(rt, "shareOp") {
	case 0:
		req = shareBeatReq(group, c.id, 0, subscription...)
	case 1:
		req = shareBeatReq(group, c.id, epoch)
		if rapid.Bool().Draw(rt, "resubscribe") {
			req.SubscribedTopicNames = subscription
		}
	case 2:
		req = shareBeatReq(group, c.id, epoch)
	case 3:
		req = shareBeatReq(group, c.id, leaveEpoch)
	case 4:
		h.do(&kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{group}}, client)
		switch rapid.IntRange(0, 2).Draw(rt, "shareAdmin") {
		case 0:
			h.do(&kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{group}}, client)
		case 1:
			h.do(alterShareReq(group, rapid.SampledFrom([]string{"t1", "t2", "t3"}).Draw(rt, "alterTopic"), 0, 1), client)
		case 2:
			del := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
			del.GroupID = group
			rt2 := kmsg.NewDeleteShareGroupOffsetsRequestTopic()
			rt2.Topic = rapid.SampledFrom([]string{"t1", "t2"}).Draw(rt, "deleteTopic")
			del.Topics = append(del.Topics, rt2)
			h.do(del, client)
		}
		return
	}
	resp := h.resp(h.do(req, client)).(*kmsg.ShareGroupHeartbeatResponse)
	switch {
	case resp.ErrorCode != 0:
		c.epoch, c.assigned = 0, nil // it joins again
	case req.MemberEpoch < 0:
		c.epoch, c.assigned = 0, nil
	default:
		c.epoch = resp.MemberEpoch
	}
}

// drawEpoch is the producer's known epoch, sometimes one off either way.
func drawEpoch(rt *rapid.T, h *harness, pid int64) int16 {
	epoch := int16(0)
	if p := h.c.producers[pid]; p != nil {
		epoch = p.epoch
	}
	return max(0, epoch+int16(rapid.SampledFrom([]int{-1, 0, 0, 1}).Draw(rt, "epochSkew")))
}
