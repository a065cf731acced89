package group

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// cgHarness drives one consumer group through heartbeats and keeps every
// record written, to check that replaying them gives the same group.
type cgHarness struct {
	t       fataler
	cg      *consumerGroup
	view    topicsView
	now     time.Time
	set     consumerSettings
	records []runtime.Record
	ids     int
}

// fataler is what the harness needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func newCGHarness(t fataler, partitions int32) *cgHarness {
	return &cgHarness{t: t, view: viewOf(map[string]int32{"t1": partitions}), now: time.UnixMilli(1_000_000),
		set: consumerSettings{sessionTimeout: 45 * time.Second, heartbeatInterval: 5 * time.Second, maxSize: 3, assignors: testAssignors}}
}

func (h *cgHarness) send(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	if r := validateHeartbeat(req, h.set.assignors); r.code != 0 {
		h.t.Fatalf("request refused: %+v", r)
	}
	w := consumerWrite{id: "g", cg: h.cg}
	var resp *kmsg.ConsumerGroupHeartbeatResponse
	if req.MemberEpoch < 0 {
		var leaving *consumerMember
		if resp, leaving = w.leave(req); leaving != nil {
			w.fence(leaving, h.view, h.now)
		}
	} else {
		op := runtime.Op{ClientID: "client", ClientHost: "/127.0.0.1"}
		resp = w.heartbeat(op, req, h.view, h.set, h.now, func() string { h.ids++; return fmt.Sprintf("gen-%d", h.ids) })
	}
	if len(w.records) > 0 {
		h.cg = w.cg
		h.records = append(h.records, w.records...)
	}
	h.checkReplay()
	return resp
}

// checkReplay replays every record so far and compares the group with
// the live one (timers aside: they are not persisted).
func (h *cgHarness) checkReplay() {
	h.t.Helper()
	var cg *consumerGroup
	for i, r := range h.records {
		k, err := readConsumerKey(r.Key)
		if err == nil {
			cg, err = replayConsumer(cg, k, r.Value)
		}
		if err != nil {
			h.t.Fatalf("replaying record %d: %v", i, err)
		}
	}
	if cg == nil || h.cg == nil {
		if cg != h.cg {
			h.t.Fatalf("replayed %v, live %v", cg, h.cg)
		}
		return
	}
	checkSubscriptionCounts(h.t, h.cg)
	if cg.epoch != h.cg.epoch || cg.assignmentEpoch != h.cg.assignmentEpoch || !slices.Equal(cg.memberIDs(), h.cg.memberIDs()) ||
		!maps.EqualFunc(cg.targets, h.cg.targets, assignor.Assignment.Equal) || !maps.EqualFunc(cg.partitionEpochs, h.cg.partitionEpochs, maps.Equal) {
		h.t.Fatalf("replayed group differs:\n got %+v\nlive %+v", cg, h.cg)
	}
	for id, m := range cg.members {
		live := h.cg.members[id]
		if !sameReconciliation(m.Member, live.Member) || !m.metadata().equal(live.metadata()) || !maps.EqualFunc(m.assignedSince, live.assignedSince, maps.Equal) {
			h.t.Fatalf("replayed member %s differs:\n got %+v\nlive %+v", id, m, h.cg.members[id])
		}
	}
}

// checkSubscriptionCounts checks the group's subscription counts against
// its members.
func checkSubscriptionCounts(t fataler, cg *consumerGroup) {
	t.Helper()
	names, regexes := map[string]int{}, map[string]int{}
	for _, m := range cg.members {
		for _, name := range m.topics {
			names[name]++
		}
		if m.regex != nil {
			regexes[*m.regex]++
		}
	}
	if !maps.Equal(names, cg.subscribers) || !maps.Equal(regexes, cg.regexUsers) {
		t.Fatalf("subscription counts %v %v, members say %v %v", cg.subscribers, cg.regexUsers, names, regexes)
	}
}

func join(id string, instance *string) *kmsg.ConsumerGroupHeartbeatRequest {
	req := joinRequest()
	req.MemberID, req.InstanceID = id, instance
	return req
}

// beat is a heartbeat of member id at epoch that owns owned (nil: says
// nothing).
func beat(id string, epoch int32, owned assignor.Assignment) *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "g", id, epoch
	req.RebalanceTimeoutMillis = -1
	if owned != nil {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for _, tp := range topicPartitionsOf(owned) {
			req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: tp.TopicID, Partitions: tp.Partitions})
		}
	}
	return req
}

func leaveReq(id string, epoch int32, instance *string) *kmsg.ConsumerGroupHeartbeatRequest {
	req := beat(id, epoch, nil)
	req.InstanceID = instance
	return req
}

func assigned(resp *kmsg.ConsumerGroupHeartbeatResponse) assignor.Assignment {
	if resp.Assignment == nil {
		return nil
	}
	l := make([]topicPartitions, len(resp.Assignment.Topics))
	for i, t := range resp.Assignment.Topics {
		l[i] = topicPartitions{TopicID: t.TopicID, Partitions: t.Partitions}
	}
	return assignmentOf(l)
}

func wantResp(t *testing.T, what string, resp *kmsg.ConsumerGroupHeartbeatResponse, code int16, epoch int32, assignment assignor.Assignment) {
	t.Helper()
	if resp.ErrorCode != code || (code == 0 && resp.MemberEpoch != epoch) {
		t.Fatalf("%s: error %d, epoch %d; want error %d, epoch %d", what, resp.ErrorCode, resp.MemberEpoch, code, epoch)
	}
	if assignment != nil && !assigned(resp).Equal(assignment) {
		t.Fatalf("%s: assignment %v, want %v", what, assigned(resp), assignment)
	}
}

// Two members share a topic: the second joins, the first revokes half of
// its partitions and only then does the second get them; a leave gives
// them back. Every step's records replay to the live group.
func TestConsumerHeartbeatRebalance(t *testing.T) {
	h := newCGHarness(t, 4)
	wantResp(t, "a joins", h.send(join("a", nil)), 0, 1, tps(cgT1, 0, 1, 2, 3))
	if h.cg.state() != consumerStable || h.cg.members["a"].clientID != "client" || h.cg.members["a"].session.at != h.now.Add(45*time.Second) {
		t.Fatalf("after a joins: %s, %+v", h.cg.state(), h.cg.members["a"])
	}
	wantResp(t, "a again", h.send(beat("a", 1, tps(cgT1, 0, 1, 2, 3))), 0, 1, tps(cgT1, 0, 1, 2, 3))

	bJoin := h.send(join("b", nil))
	wantResp(t, "b joins", bJoin, 0, 2, assignor.Assignment{})
	if b := h.cg.members["b"]; b.State != reconcile.UnreleasedPartitions || h.cg.targets["b"].Size() != 2 {
		t.Fatalf("b waits for its partitions: %+v, target %v", b.Member, h.cg.targets["b"])
	}
	keep := h.cg.targets["a"]
	aRevoke := h.send(beat("a", 1, tps(cgT1, 0, 1, 2, 3)))
	wantResp(t, "a asked to revoke", aRevoke, 0, 1, keep)
	if a := h.cg.members["a"]; a.State != reconcile.UnrevokedPartitions || !a.revocation.armed {
		t.Fatalf("a revoking: %+v", a)
	}
	wantResp(t, "b still waits", h.send(beat("b", 2, assignor.Assignment{})), 0, 2, assignor.Assignment{})
	wantResp(t, "a revoked", h.send(beat("a", 1, keep)), 0, 2, keep)
	if a := h.cg.members["a"]; a.State != reconcile.Stable || a.revocation.armed {
		t.Fatalf("a after revoking: %+v", a)
	}
	wantResp(t, "b gets them", h.send(beat("b", 2, assignor.Assignment{})), 0, 2, h.cg.targets["b"])
	if h.cg.state() != consumerStable || h.cg.members["b"].Assigned.Size() != 2 {
		t.Fatalf("state %s, b %+v", h.cg.state(), h.cg.members["b"].Member)
	}

	wantResp(t, "a leaves", h.send(leaveReq("a", -1, nil)), 0, -1, nil)
	if _, ok := h.cg.members["a"]; ok || h.cg.epoch != 3 {
		t.Fatalf("after a leaves: members %v, epoch %d", h.cg.memberIDs(), h.cg.epoch)
	}
	wantResp(t, "b takes all", h.send(beat("b", 2, h.cg.members["b"].Assigned)), 0, 3, tps(cgT1, 0, 1, 2, 3))
}

func TestConsumerHeartbeatRefusals(t *testing.T) {
	h := newCGHarness(t, 4)
	h.send(join("a", nil))
	wantResp(t, "unknown member", h.send(beat("x", 1, nil)), kerr.UnknownMemberID.Code, 0, nil)
	wantResp(t, "an epoch ahead", h.send(beat("a", 2, nil)), kerr.FencedMemberEpoch.Code, 0, nil)
	wantResp(t, "unknown member leaves", h.send(leaveReq("x", -1, nil)), kerr.UnknownMemberID.Code, 0, nil)
	h.send(join("b", nil))
	h.send(join("c", nil))
	wantResp(t, "a fourth member", h.send(join("d", nil)), kerr.GroupMaxSizeReached.Code, 0, nil)
	if _, ok := h.cg.members["d"]; ok {
		t.Fatal("a refused member is in the group")
	}
	// A member that joins again starts over, without a new group epoch.
	epoch := h.cg.epoch
	wantResp(t, "a rejoins", h.send(join("a", nil)), 0, h.cg.assignmentEpoch, nil)
	if h.cg.epoch != epoch {
		t.Fatalf("a rejoin moved the group epoch %d -> %d", epoch, h.cg.epoch)
	}
}

// A v0 client joins without a member id and gets one.
func TestConsumerHeartbeatNamesAV0Member(t *testing.T) {
	h := newCGHarness(t, 2)
	req := join("", nil)
	req.Version = 0
	resp := h.send(req)
	if resp.ErrorCode != 0 || resp.MemberID == nil || *resp.MemberID != "gen-1" || h.cg.members["gen-1"] == nil {
		t.Fatalf("v0 join: %+v", resp)
	}
}

// A static member leaves for a while (epoch -2) and comes back under a
// new member id: it finds its partitions, and the group does not
// rebalance. While it is there, its instance id is not free.
func TestConsumerHeartbeatStaticMember(t *testing.T) {
	h := newCGHarness(t, 4)
	i := "instance-1"
	h.send(join("s1", &i))
	h.send(join("d", nil))
	h.send(beat("s1", 1, tps(cgT1, 0, 1, 2, 3)))
	h.send(beat("s1", 1, h.cg.targets["s1"]))
	h.send(beat("d", 2, assignor.Assignment{}))
	owned := h.cg.members["s1"].Assigned
	epoch := h.cg.epoch

	wantResp(t, "another instance-1", h.send(join("s2", &i)), kerr.UnreleasedInstanceID.Code, 0, nil)
	// s1 rejoining under its own id (its join's answer lost) is s1 again.
	wantResp(t, "s1 rejoins as itself", h.send(join("s1", &i)), 0, h.cg.assignmentEpoch, nil)
	h.send(beat("s1", h.cg.assignmentEpoch, assignor.Assignment{}))
	if s := h.cg.members["s1"]; !s.Assigned.Equal(owned) || h.cg.epoch != epoch {
		t.Fatalf("after s1 rejoins as itself: %+v, group epoch %d (was %d)", s.Member, h.cg.epoch, epoch)
	}
	// A member id keeps its instance id: a join cannot change it.
	other := "instance-3"
	wantResp(t, "s1 joins as another instance", h.send(join("s1", &other)), kerr.InvalidRequest.Code, 0, nil)
	wantResp(t, "a dynamic member joins as an instance", h.send(join("d", &other)), kerr.InvalidRequest.Code, 0, nil)
	if h.cg.static[i] != "s1" || h.cg.members["d"].instanceID != nil {
		t.Fatalf("after the refused joins: static %v", h.cg.static)
	}
	wantResp(t, "static leave", h.send(leaveReq("s1", -2, &i)), 0, -2, nil)
	if s := h.cg.members["s1"]; s.Epoch != staticLeaveEpoch || !s.Assigned.Equal(owned) {
		t.Fatalf("after the static leave: %+v", s.Member)
	}
	back := h.send(join("s2", &i))
	wantResp(t, "back as s2", back, 0, h.cg.assignmentEpoch, owned)
	if _, ok := h.cg.members["s1"]; ok || h.cg.static[i] != "s2" || h.cg.epoch != epoch {
		t.Fatalf("after the return: members %v, static %v, epoch %d (was %d)", h.cg.memberIDs(), h.cg.static, h.cg.epoch, epoch)
	}
	wantResp(t, "a wrong member for the instance leaves", h.send(leaveReq("d", -2, &i)), kerr.FencedInstanceID.Code, 0, nil)

	// Past the join, an instance id must be the member's own (Kafka): a
	// heartbeat cannot make a member static, nor take another's instance.
	stranger := "instance-2"
	beatAs := func(id string, instance *string) *kmsg.ConsumerGroupHeartbeatRequest {
		m := h.cg.members[id]
		req := beat(id, m.Epoch, m.Assigned)
		req.InstanceID = instance
		return req
	}
	wantResp(t, "a dynamic member names an unknown instance", h.send(beatAs("d", &stranger)), kerr.UnknownMemberID.Code, 0, nil)
	wantResp(t, "a dynamic member names another's instance", h.send(beatAs("d", &i)), kerr.FencedInstanceID.Code, 0, nil)
	if d := h.cg.members["d"]; d == nil || d.instanceID != nil || h.cg.static[i] != "s2" {
		t.Fatalf("after the refused heartbeats: d %+v, static %v", d, h.cg.static)
	}
	wantResp(t, "a dynamic member leaves as an unknown instance", h.send(leaveReq("d", -1, &stranger)), kerr.UnknownMemberID.Code, 0, nil)
	wantResp(t, "a dynamic member leaves as another's instance", h.send(leaveReq("d", -1, &i)), kerr.FencedInstanceID.Code, 0, nil)
	if h.cg.members["d"] == nil || h.cg.members["s2"] == nil {
		t.Fatalf("a refused leave took a member: %v", h.cg.memberIDs())
	}
	wantResp(t, "the static member heartbeats", h.send(beatAs("s2", &i)), 0, h.cg.members["s2"].Epoch, nil)
}

// A topic that gains partitions moves the group epoch on at the next
// heartbeat, and the new partitions are assigned.
func TestConsumerHeartbeatTopicGrows(t *testing.T) {
	h := newCGHarness(t, 2)
	h.send(join("a", nil))
	h.view = viewOf(map[string]int32{"t1": 3})
	wantResp(t, "after the topic grew", h.send(beat("a", 1, tps(cgT1, 0, 1))), 0, 2, tps(cgT1, 0, 1, 2))
}

func (h *cgHarness) tick(d time.Duration) {
	h.t.Helper()
	h.now = h.now.Add(d)
	w := consumerWrite{id: "g", cg: h.cg}
	for _, m := range h.cg.due(func() time.Duration { return h.set.sessionTimeout }, &timerScan{now: h.now}) {
		w.fence(m, h.view, h.now)
	}
	h.cg = w.cg
	h.records = append(h.records, w.records...)
	h.checkReplay()
}

// A member that stops heartbeating is fenced when its session ends; one
// that does not revoke within its rebalance timeout is fenced too, though
// it heartbeats.
func TestConsumerMembersExpire(t *testing.T) {
	h := newCGHarness(t, 4)
	h.send(join("a", nil))
	h.send(join("b", nil))
	h.tick(44 * time.Second)
	if len(h.cg.members) != 2 {
		t.Fatalf("members fenced before their session ended: %v", h.cg.memberIDs())
	}
	h.send(beat("b", 2, assignor.Assignment{}))
	h.tick(2 * time.Second)
	if _, ok := h.cg.members["a"]; ok || h.cg.members["b"] == nil || h.cg.epoch != 3 {
		t.Fatalf("after a's session: members %v, epoch %d", h.cg.memberIDs(), h.cg.epoch)
	}

	h = newCGHarness(t, 4)
	h.send(join("a", nil))
	h.send(join("b", nil))
	h.send(beat("a", 1, tps(cgT1, 0, 1, 2, 3))) // asked to revoke, rebalance timeout 30 s
	for round := range 3 {
		h.tick(10 * time.Second)
		if round < 2 && h.cg.members["a"] == nil {
			t.Fatalf("a fenced after %d s of its 30 s rebalance timeout", 10*(round+1))
		}
		h.send(beat("b", 2, assignor.Assignment{}))
		if h.cg.members["a"] != nil {
			h.send(beat("a", 1, tps(cgT1, 0, 1, 2, 3))) // still owns what it must revoke
		}
	}
	if _, ok := h.cg.members["a"]; ok {
		t.Fatalf("a kept revoking past its rebalance timeout: %+v", h.cg.members["a"])
	}
	wantResp(t, "b takes all", h.send(beat("b", 2, assignor.Assignment{})), 0, h.cg.epoch, tps(cgT1, 0, 1, 2, 3))

	// A loaded member gets a session at the first tick.
	loaded := &cgHarness{t: t, cg: stableGroup(t), view: h.view, now: h.now, set: h.set}
	loaded.records = nil
	due := loaded.cg.due(func() time.Duration { return loaded.set.sessionTimeout }, &timerScan{now: loaded.now})
	if len(due) != 0 || !loaded.cg.members["a"].session.armed {
		t.Fatalf("first tick after a load: %d due, a's session %+v", len(due), loaded.cg.members["a"].session)
	}
}

// A member subscribed by regular expression gets the matching topics; a
// topic created later that matches is assigned at the next heartbeat; an
// expression nobody uses any more is deleted. An internal topic matches as
// any other (Kafka resolves against every topic).
func TestConsumerHeartbeatRegex(t *testing.T) {
	h := newCGHarness(t, 1)
	h.view = viewOf(map[string]int32{"t1": 2, "t2": 1, "other": 3, "__consumer_offsets": 50})
	req := join("a", nil)
	req.SubscribedTopicNames, req.SubscribedTopicRegex = nil, ptr("t.*")
	wantResp(t, "a joins by regex", h.send(req), 0, 1, assignor.Assignment{cgT1: {0, 1}, cgT2: {0}})
	if re := h.cg.regexes["t.*"]; !slices.Equal(re.Topics, []string{"t1", "t2"}) {
		t.Fatalf("resolved to %v", re.Topics)
	}
	records := len(h.records)
	wantResp(t, "a heartbeat, nothing new", h.send(beat("a", 1, nil)), 0, 1, nil)
	if len(h.records) != records {
		t.Fatalf("an idle heartbeat wrote %d records", len(h.records)-records)
	}

	h.view = viewOf(map[string]int32{"t1": 2, "t2": 1, "t3": 2, "other": 3, "__consumer_offsets": 50})
	wantResp(t, "after t3 was created", h.send(beat("a", 1, assignor.Assignment{cgT1: {0, 1}, cgT2: {0}})), 0, 2,
		assignor.Assignment{cgT1: {0, 1}, cgT2: {0}, cgTopicIDs["t3"]: {0, 1}})

	internal := join("b", nil)
	internal.SubscribedTopicNames, internal.SubscribedTopicRegex = nil, ptr("__consumer_offsets")
	h.send(internal)
	if re := h.cg.regexes["__consumer_offsets"]; !slices.Equal(re.Topics, []string{"__consumer_offsets"}) {
		t.Fatalf("an expression naming the internal topic resolved to %v", re.Topics)
	}
	h.send(leaveReq("b", -1, nil))

	sub := beat("a", 2, nil)
	sub.SubscribedTopicNames, sub.SubscribedTopicRegex = []string{"other"}, ptr("")
	h.send(sub)
	if len(h.cg.regexes) != 0 || h.cg.members["a"].regex != nil {
		t.Fatalf("after leaving the regex: %v, %v", h.cg.regexes, h.cg.members["a"].regex)
	}
}

// Deleting a group writes every record's tombstone; replaying them all
// leaves no group.
func TestConsumerGroupDeletion(t *testing.T) {
	h := newCGHarness(t, 2)
	h.view = viewOf(map[string]int32{"t1": 2})
	req := join("a", nil)
	req.SubscribedTopicRegex = ptr("t.*")
	h.send(req)
	h.send(leaveReq("a", 1, nil))
	w := consumerWrite{id: "g", cg: h.cg}
	w.deleteGroup()
	h.cg = w.cg
	h.records = append(h.records, w.records...)
	if h.cg != nil {
		t.Fatalf("group after deletion: %+v", h.cg)
	}
	h.checkReplay()

	// With members (as the coordinator refuses it, but the records still
	// go in order).
	h = newCGHarness(t, 2)
	h.send(join("a", nil))
	h.send(join("b", nil))
	w = consumerWrite{id: "g", cg: h.cg}
	w.deleteGroup()
	if w.cg != nil {
		t.Fatalf("group with members after deletion: %+v", w.cg)
	}
}
