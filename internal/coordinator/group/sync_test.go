package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func hbCode(h *harness, group, id string, gen int32) int16 {
	return h.resp(h.do(heartbeatReq(group, id, gen), "c")).(*kmsg.HeartbeatResponse).ErrorCode
}

// heartbeatFor advances the clock by d in steps of 5 s, each member of ids
// heartbeating group at generation gen after each step.
func (h *harness) heartbeatFor(d time.Duration, group string, gen int32, ids ...string) {
	for elapsed := time.Duration(0); elapsed < d; elapsed += 5 * time.Second {
		h.advance(5 * time.Second)
		for _, id := range ids {
			hbCode(h, group, id, gen)
		}
	}
}

// retentionOptions are testOptions with an hour's offsets retention,
// checked every minute.
func retentionOptions() Options {
	o := testOptions()
	o.OffsetsRetention = time.Hour
	o.OffsetsRetentionCheckInterval = time.Minute
	return o
}

func TestSyncFollowersWaitForLeader(t *testing.T) {
	h := newHarness(t, testOptions())
	id1, j1 := h.joinNew("g", "c1")
	_ = h.joinResp(j1)
	id2, j2 := h.joinNew("g", "c2")
	j1 = h.do(joinReq("g", id1, nil), "c1")
	gen := h.joinResp(j2).Generation
	if lead := h.joinResp(j1); lead.Generation != gen || lead.LeaderID != id1 || len(lead.Members) != 2 {
		t.Fatalf("leader's join: generation %d (want %d), leader %q, %d members", lead.Generation, gen, lead.LeaderID, len(lead.Members))
	}
	follower := h.do(syncReq("g", id2, gen, nil), "c2")
	if h.answered(follower) {
		t.Fatal("a follower's sync was answered before the leader's")
	}
	wantCode(t, "heartbeat while completing", hbCode(h, "g", id2, gen), nil)
	leader := h.do(syncReq("g", id1, gen, map[string][]byte{id1: []byte("one"), id2: []byte("two")}), "c1")
	if got := string(h.syncResp(follower).MemberAssignment); got != "two" {
		t.Fatalf("follower assignment %q", got)
	}
	if got := string(h.syncResp(leader).MemberAssignment); got != "one" {
		t.Fatalf("leader assignment %q", got)
	}
	// A late sync in Stable gets the assignment at once.
	if got := string(h.syncResp(h.do(syncReq("g", id2, gen, nil), "c2")).MemberAssignment); got != "two" {
		t.Fatalf("late sync assignment %q", got)
	}
}

func TestSyncErrors(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 2)
	code := func(req *kmsg.SyncGroupRequest) int16 { return h.syncResp(h.do(req, "c")).ErrorCode }
	wantCode(t, "wrong generation", code(syncReq("g", ids[0], gen+1, nil)), kerr.IllegalGeneration)
	wantCode(t, "unknown member", code(syncReq("g", "nobody", gen, nil)), kerr.UnknownMemberID)
	wantCode(t, "unknown group", code(syncReq("nope", ids[0], gen, nil)), kerr.UnknownMemberID)
	bad := syncReq("g", ids[0], gen, nil)
	bad.Protocol = kmsg.StringPtr("roundrobin")
	wantCode(t, "v5 protocol name", code(bad), kerr.InconsistentGroupProtocol)
	bad = syncReq("g", ids[0], gen, nil)
	bad.ProtocolType = kmsg.StringPtr("connect")
	wantCode(t, "v5 protocol type", code(bad), kerr.InconsistentGroupProtocol)
	// A rebalance is under way: sync answers REBALANCE_IN_PROGRESS.
	h.do(joinReq("g", ids[0], nil), "c")
	wantCode(t, "sync while preparing", code(syncReq("g", ids[1], gen, nil)), kerr.RebalanceInProgress)
}

func TestHeartbeat(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 2)
	wantCode(t, "good", hbCode(h, "g", ids[0], gen), nil)
	wantCode(t, "wrong generation", hbCode(h, "g", ids[0], gen-1), kerr.IllegalGeneration)
	wantCode(t, "unknown member", hbCode(h, "g", "x", gen), kerr.UnknownMemberID)
	wantCode(t, "unknown group", hbCode(h, "nope", ids[0], gen), kerr.UnknownMemberID)
}

func TestSessionTimeoutRemovesMemberAndRebalances(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 2)
	h.advance(testSession / 2)
	wantCode(t, "live member heartbeat", hbCode(h, "g", ids[0], gen), nil)
	h.advance(testSession / 2)
	g := h.c.groups["g"]
	if _, ok := g.members[ids[1]]; ok {
		t.Fatal("the silent member outlived its session")
	}
	if g.state != statePreparingRebalance {
		t.Fatalf("state %v after a member expired", g.state)
	}
	wantCode(t, "heartbeat after expiry", hbCode(h, "g", ids[0], gen), kerr.RebalanceInProgress)
	r := h.joinResp(h.do(joinReq("g", ids[0], nil), "c"))
	if r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("rejoin response %+v", r)
	}
}

func TestPendingSyncTimeoutRemovesMembersThatNeverSync(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 2)
	j0 := h.do(joinReq("g", ids[0], nil), "c")
	j1 := h.do(joinReq("g", ids[1], nil), "c")
	gen := h.joinResp(j0).Generation
	_ = h.joinResp(j1)
	h.do(syncReq("g", ids[0], gen, map[string][]byte{ids[0]: []byte("x")}), "c")
	// ids[1] heartbeats but never syncs.
	for range 7 {
		h.advance(5 * time.Second)
		hbCode(h, "g", ids[1], gen)
		hbCode(h, "g", ids[0], gen)
	}
	if _, ok := h.c.groups["g"].members[ids[1]]; ok {
		t.Fatal("a member that never synced is still in the group")
	}
}

func TestLeaveGroup(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 3)
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 5
	lr.Group = "g"
	lr.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[1]}, {MemberID: "ghost"}, {MemberID: ids[2]}}
	resp := h.resp(h.do(lr, "c")).(*kmsg.LeaveGroupResponse)
	wantCode(t, "top level", resp.ErrorCode, nil)
	wantCode(t, "member 1", resp.Members[0].ErrorCode, nil)
	wantCode(t, "ghost", resp.Members[1].ErrorCode, kerr.UnknownMemberID)
	wantCode(t, "member 2", resp.Members[2].ErrorCode, nil)
	g := h.c.groups["g"]
	if len(g.members) != 1 || g.state != statePreparingRebalance {
		t.Fatalf("after leave: %d members, state %v", len(g.members), g.state)
	}
	// v0: one member, the error at top level.
	old := kmsg.NewPtrLeaveGroupRequest()
	old.Group, old.MemberID = "g", "ghost"
	wantCode(t, "v0 unknown", h.resp(h.do(old, "c")).(*kmsg.LeaveGroupResponse).ErrorCode, kerr.UnknownMemberID)
	old = kmsg.NewPtrLeaveGroupRequest()
	old.Group, old.MemberID = "g", ids[0]
	wantCode(t, "v0 last member", h.resp(h.do(old, "c")).(*kmsg.LeaveGroupResponse).ErrorCode, nil)
	if g.state != stateEmpty {
		t.Fatalf("state %v after everyone left", g.state)
	}
}

func TestStaticMemberRejoinFencesOldMember(t *testing.T) {
	h := newHarness(t, testOptions())
	inst := kmsg.StringPtr("instance-1")
	// A static member joins with its instance id at once (no MEMBER_ID_REQUIRED).
	r := h.joinResp(h.do(joinReq("g", "", inst), "c"))
	wantCode(t, "static join", r.ErrorCode, nil)
	oldID, gen := r.MemberID, r.Generation
	h.syncResp(h.do(syncReq("g", oldID, gen, map[string][]byte{oldID: []byte("P")}), "c"))
	records := len(h.records)

	// The same instance restarts: new member id, no rebalance, same assignment.
	r = h.joinResp(h.do(joinReq("g", "", inst), "c"))
	wantCode(t, "static rejoin", r.ErrorCode, nil)
	if r.MemberID == oldID || r.Generation != gen || !r.SkipAssignment || r.LeaderID != r.MemberID {
		t.Fatalf("static rejoin response %+v", r)
	}
	if len(h.records) != records+1 {
		t.Fatal("the replacement of a static member was not persisted")
	}
	g := h.c.groups["g"]
	if g.state != stateStable || string(g.members[r.MemberID].assignment) != "P" {
		t.Fatalf("state %v, assignment %q", g.state, g.members[r.MemberID].assignment)
	}
	hb := heartbeatReq("g", oldID, gen)
	hb.InstanceID = inst
	wantCode(t, "old member heartbeat", h.resp(h.do(hb, "c")).(*kmsg.HeartbeatResponse).ErrorCode, kerr.FencedInstanceID)
	jr := joinReq("g", oldID, inst)
	wantCode(t, "old member join", h.joinResp(h.do(jr, "c")).ErrorCode, kerr.FencedInstanceID)
	sr := syncReq("g", oldID, gen, nil)
	sr.InstanceID = inst
	wantCode(t, "old member sync", h.syncResp(h.do(sr, "c")).ErrorCode, kerr.FencedInstanceID)
	hb = heartbeatReq("g", r.MemberID, gen)
	hb.InstanceID = inst
	wantCode(t, "new member heartbeat", h.resp(h.do(hb, "c")).(*kmsg.HeartbeatResponse).ErrorCode, nil)
}

func TestStaticMemberReplacedWhileWaitingInJoin(t *testing.T) {
	h := newHarness(t, testOptions())
	inst := kmsg.StringPtr("i")
	ids, gen := h.stableGroup("g", 1)
	// A static member joins with its instance id at once (no
	// MEMBER_ID_REQUIRED) and waits for the others to rejoin.
	first := h.do(joinReq("g", "", inst), "c")
	if h.answered(first) {
		t.Fatal("the static join did not wait for the join phase")
	}
	// The same instance again (the client restarted): the waiting join is fenced.
	second := h.do(joinReq("g", "", inst), "c")
	wantCode(t, "first static join", h.joinResp(first).ErrorCode, kerr.FencedInstanceID)
	lead := h.do(joinReq("g", ids[0], nil), "c")
	r := h.joinResp(second)
	wantCode(t, "second static join", r.ErrorCode, nil)
	if r.Generation != gen+1 || h.joinResp(lead).Generation != gen+1 || len(h.joinResp(lead).Members) != 2 {
		t.Fatalf("responses %+v %+v", r, h.joinResp(lead))
	}
	checkInvariants(t, h.c)
}

// A static member that stops without leaving (as clients close one) is
// removed once its session times out, like any member, and its group is
// Empty then: DeleteGroups may go ahead (librdkafka's 0081_admin deletes
// its static groups a session timeout after closing them).
func TestStaticMemberSessionTimesOut(t *testing.T) {
	opts := testOptions()
	opts.InitialRebalanceDelay = 3 * time.Second // Kafka's default
	h := newHarness(t, opts)
	inst := kmsg.StringPtr("instance-1")
	join := h.do(joinReq("g", "", inst), "c")
	h.advance(opts.InitialRebalanceDelay) // a new group's first join waits that long
	r := h.joinResp(join)
	wantCode(t, "static join", r.ErrorCode, nil)
	h.syncResp(h.do(syncReq("g", r.MemberID, r.Generation, map[string][]byte{r.MemberID: []byte("P")}), "c"))
	h.advance(testSession / 2)
	hb := heartbeatReq("g", r.MemberID, r.Generation)
	hb.InstanceID = inst
	wantCode(t, "heartbeat", h.resp(h.do(hb, "c")).(*kmsg.HeartbeatResponse).ErrorCode, nil)
	h.advance(testSession - time.Millisecond)
	if g := h.c.groups["g"]; len(g.members) != 1 {
		t.Fatalf("the member went before its session ended: %d members", len(g.members))
	}
	h.advance(2 * time.Millisecond)
	if g := h.c.groups["g"]; len(g.members) != 0 || g.state != stateEmpty || len(g.static) != 0 {
		t.Fatalf("a session past its timeout: %d members, state %v, static %v; want none, Empty", len(g.members), g.state, g.static)
	}
}
