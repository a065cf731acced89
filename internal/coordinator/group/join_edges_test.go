package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests of the classic protocol's less travelled paths, each checked
// against Kafka's GroupMetadataManager: what a member that retries, is
// slow, or is replaced gets back, and which timers its requests refresh.

func leaveReqV5(group string, members ...kmsg.LeaveGroupRequestMember) *kmsg.LeaveGroupRequest {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	req.Group = group
	req.Members = members
	return req
}

// A JoinGroup with the same protocols from a member that already has the
// current generation (its response was lost) is answered at once with that
// generation; a changed subscription, or the leader, starts a rebalance.
func TestRejoinOfAKnownMember(t *testing.T) {
	for _, tc := range []struct {
		name       string
		completing bool // rejoin while CompletingRebalance, else Stable
		leader     bool
		protocols  []string
		rebalance  bool
	}{
		{"completing, same protocols", true, false, nil, false},
		{"completing, leader, same protocols", true, true, nil, false},
		{"completing, changed protocols", true, false, []string{"roundrobin", "range"}, true},
		{"stable follower, same protocols", false, false, nil, false},
		{"stable follower, changed protocols", false, false, []string{"roundrobin", "range"}, true},
		{"stable leader, same protocols", false, true, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testOptions())
			ids, gen := h.stableGroup("g", 2)
			if tc.completing {
				h.do(joinReq("g", ids[0], nil), "c")
				gen = h.joinResp(h.do(joinReq("g", ids[1], nil), "c")).Generation
			}
			who := ids[1]
			if tc.leader {
				who = ids[0]
			}
			tok := h.do(joinReq("g", who, nil, tc.protocols...), "c")
			g := h.c.groups["g"]
			if tc.rebalance {
				if h.answered(tok) || g.state != statePreparingRebalance {
					t.Fatalf("no rebalance: answered %v, state %v", h.answered(tok), g.state)
				}
				return
			}
			r := h.joinResp(tok)
			wantCode(t, "rejoin", r.ErrorCode, nil)
			if r.Generation != gen || r.MemberID != who || r.LeaderID != ids[0] || *r.Protocol != "range" {
				t.Fatalf("rejoin response %+v, want generation %d", r, gen)
			}
			wantMembers := 0 // only the leader's response lists the members
			if tc.leader {
				wantMembers = 2
			}
			if len(r.Members) != wantMembers {
				t.Fatalf("the join lists %d members, want %d", len(r.Members), wantMembers)
			}
			wantState := stateStable
			if tc.completing {
				wantState = stateCompletingRebalance
			}
			if g.state != wantState || g.generation != gen {
				t.Fatalf("state %v generation %d after the rejoin, want %v %d", g.state, g.generation, wantState, gen)
			}
			checkInvariants(t, h.c)
		})
	}
}

// A first JoinGroup is refused, leaving no group behind, without a group
// id, with a session timeout outside [SessionTimeoutMin,
// SessionTimeoutMax] (the bounds are allowed, as in Kafka), or without a
// protocol type or protocols (Kafka's supportsProtocols of an Empty group).
func TestFirstJoinRefusals(t *testing.T) {
	opts := testOptions()
	session := func(d time.Duration) func(*kmsg.JoinGroupRequest) {
		return func(r *kmsg.JoinGroupRequest) { r.SessionTimeoutMillis = int32(d / time.Millisecond) }
	}
	for _, tc := range []struct {
		name string
		edit func(*kmsg.JoinGroupRequest)
		want *kerr.Error
	}{
		{"no group id", func(r *kmsg.JoinGroupRequest) { r.Group = "" }, kerr.InvalidGroupID},
		{"no protocol type", func(r *kmsg.JoinGroupRequest) { r.ProtocolType = "" }, kerr.InconsistentGroupProtocol},
		{"no protocols", func(r *kmsg.JoinGroupRequest) { r.Protocols = nil }, kerr.InconsistentGroupProtocol},
		{"session below the minimum", session(opts.SessionTimeoutMin - time.Millisecond), kerr.InvalidSessionTimeout},
		{"session above the maximum", session(opts.SessionTimeoutMax + time.Millisecond), kerr.InvalidSessionTimeout},
		{"session at the minimum", session(opts.SessionTimeoutMin), kerr.MemberIDRequired},
		{"session at the maximum", session(opts.SessionTimeoutMax), kerr.MemberIDRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, opts)
			req := joinReq("g", "", nil)
			tc.edit(req)
			wantCode(t, "join", h.joinResp(h.do(req, "c")).ErrorCode, tc.want)
			if refused := tc.want != kerr.MemberIDRequired; refused && len(h.c.groups) != 0 {
				t.Fatal("a refused join left a group behind")
			}
		})
	}
}

// The join phase waits for a member that was handed an id with
// MEMBER_ID_REQUIRED (Kafka's hasAllMembersJoined counts pending members).
func TestJoinPhaseWaitsForPendingMembers(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 1)
	first := h.joinResp(h.do(joinReq("g", "", nil), "c2"))
	wantCode(t, "new member", first.ErrorCode, kerr.MemberIDRequired)
	lead := h.do(joinReq("g", ids[0], nil), "c")
	if h.answered(lead) {
		t.Fatal("the join phase ended while a pending member had not joined")
	}
	second := h.do(joinReq("g", first.MemberID, nil), "c2")
	for _, tok := range []uint64{lead, second} {
		if r := h.joinResp(tok); r.ErrorCode != 0 || r.Generation != gen+1 {
			t.Fatalf("join response %+v, want generation %d", r, gen+1)
		}
	}
	if n := len(h.joinResp(lead).Members); n != 2 {
		t.Fatalf("the leader sees %d members, want 2", n)
	}
}

// A member handed an id with MEMBER_ID_REQUIRED may leave before it joins
// (Kafka's isPendingMember branch of LeaveGroup): then the join phase no
// longer waits for it.
func TestPendingMemberLeaves(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 1)
	pending := h.joinResp(h.do(joinReq("g", "", nil), "c2")).MemberID
	lead := h.do(joinReq("g", ids[0], nil), "c")
	resp := h.resp(h.do(leaveReqV5("g", kmsg.LeaveGroupRequestMember{MemberID: pending}), "c2")).(*kmsg.LeaveGroupResponse)
	wantCode(t, "pending member's leave", resp.Members[0].ErrorCode, nil)
	if n := len(h.c.groups["g"].pending); n != 0 {
		t.Fatalf("%d pending members after the leave", n)
	}
	if r := h.joinResp(lead); r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("join after the pending member left %+v", r)
	}
}

// The initial delay of an empty group is extended while members keep
// coming, but the whole join phase stays within the rebalance timeout
// (Kafka's InitialDelayedJoin: the extensions take at most the rebalance
// timeout less the delay, the last one only what is left of it).
func TestInitialRebalanceDelayEndsAtTheRebalanceTimeout(t *testing.T) {
	opts := testOptions()
	opts.InitialRebalanceDelay = 4 * time.Second // 30s is no multiple of it
	h := newHarness(t, opts)
	_, first := h.joinNew("g", "c0")
	for elapsed := time.Second; elapsed < testRebalance; elapsed += time.Second {
		h.advance(time.Second)
		if h.answered(first) {
			t.Fatalf("the join phase ended after %v, before the rebalance timeout, with members still coming", elapsed)
		}
		h.joinNew("g", "c")
	}
	h.advance(time.Second)
	if r := h.joinResp(first); r.ErrorCode != 0 || r.Generation != 1 {
		t.Fatalf("join response at the rebalance timeout %+v", r)
	}
}

// Members wait in JoinGroup and SyncGroup without session checks, so the
// end of each phase gives every member a whole new session, as Kafka's
// completeAndScheduleNextHeartbeatExpiration does; so do a SyncGroup in
// Stable and an OffsetCommit (rescheduleClassicGroupMemberHeartbeat).
func TestSessionRefreshes(t *testing.T) {
	t.Run("join phase", func(t *testing.T) {
		h := newHarness(t, testOptions())
		ids, gen := h.stableGroup("g", 2)
		h.do(joinReq("g", ids[0], nil), "c") // waits longer than its session
		h.advance(6 * time.Second)
		wantCode(t, "heartbeat", hbCode(h, "g", ids[1], gen), kerr.RebalanceInProgress)
		h.advance(6 * time.Second)
		h.do(joinReq("g", ids[1], nil), "c")
		h.advance(time.Second)
		if _, ok := h.c.groups["g"].members[ids[0]]; !ok {
			t.Fatal("a member lost its session while it waited in JoinGroup")
		}
	})
	t.Run("sync phase", func(t *testing.T) {
		h := newHarness(t, testOptions())
		ids, _ := h.stableGroup("g", 2)
		h.do(joinReq("g", ids[0], nil), "c")
		gen := h.joinResp(h.do(joinReq("g", ids[1], nil), "c")).Generation
		follower := h.do(syncReq("g", ids[1], gen, nil), "c") // waits for the leader
		h.advance(6 * time.Second)
		wantCode(t, "leader heartbeat", hbCode(h, "g", ids[0], gen), nil)
		h.advance(6 * time.Second)
		h.do(syncReq("g", ids[0], gen, map[string][]byte{ids[0]: []byte("x"), ids[1]: []byte("y")}), "c")
		wantCode(t, "follower sync", h.syncResp(follower).ErrorCode, nil)
		h.advance(time.Second)
		if _, ok := h.c.groups["g"].members[ids[1]]; !ok {
			t.Fatal("a member lost its session while it waited in SyncGroup")
		}
	})
	for _, tc := range []struct {
		name string
		req  func(id string, gen int32) kmsg.Request
	}{
		{"sync in stable", func(id string, gen int32) kmsg.Request { return syncReq("g", id, gen, nil) }},
		{"offset commit", func(id string, gen int32) kmsg.Request { return commitReq("g", id, gen, "t", 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testOptions())
			ids, gen := h.stableGroup("g", 2)
			h.advance(testSession - time.Second)
			hbCode(h, "g", ids[0], gen)
			h.do(tc.req(ids[1], gen), "c")
			h.advance(2 * time.Second)
			if _, ok := h.c.groups["g"].members[ids[1]]; !ok {
				t.Fatalf("the %s did not refresh the member's session", tc.name)
			}
		})
	}
}

// Loaded members have no session timer until the first Tick arms it; then
// they expire like any other, every one of them.
func TestLoadedMembersExpire(t *testing.T) {
	opts := testOptions()
	h := newHarness(t, opts)
	h.stableGroup("g", 2)
	h2 := newHarness(t, opts)
	h2.c = replayAll(t, opts, h.records)
	h2.advance(time.Second) // arms the sessions
	h2.advance(testSession - time.Millisecond)
	if g := h2.c.groups["g"]; len(g.members) != 2 {
		t.Fatalf("%d loaded members left before their session ended", len(g.members))
	}
	h2.advance(time.Millisecond)
	if g := h2.c.groups["g"]; len(g.members) != 0 || g.state != stateEmpty {
		t.Fatalf("after the session: %d members, state %v", len(g.members), g.state)
	}
}

// A member that syncs late, in Stable, is no longer pending: the sync
// deadline does not remove it (Kafka's removePendingSyncMember).
func TestLateSyncInStableIsNotPending(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 2)
	h.do(joinReq("g", ids[0], nil), "c")
	gen := h.joinResp(h.do(joinReq("g", ids[1], nil), "c")).Generation
	h.do(syncReq("g", ids[0], gen, map[string][]byte{ids[0]: []byte("x"), ids[1]: []byte("y")}), "c")
	if got := string(h.syncResp(h.do(syncReq("g", ids[1], gen, nil), "c")).MemberAssignment); got != "y" {
		t.Fatalf("late sync assignment %q", got)
	}
	h.heartbeatFor(40*time.Second, "g", gen, ids...) // past the sync deadline (the rebalance timeout)
	if g := h.c.groups["g"]; len(g.members) != 2 || g.state != stateStable {
		t.Fatalf("after the sync deadline: %d members, state %v", len(g.members), g.state)
	}
}

// A SyncGroup sent again while the first waits answers the first with
// REBALANCE_IN_PROGRESS (every op gets one reply); a rebalance that starts
// while followers wait in SyncGroup answers them so too.
func TestWaitingSyncsAreAnswered(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 3)
	for _, id := range ids {
		h.do(joinReq("g", id, nil), "c")
	}
	gen := h.c.groups["g"].generation
	first := h.do(syncReq("g", ids[1], gen, nil), "c")
	second := h.do(syncReq("g", ids[1], gen, nil), "c")
	wantCode(t, "superseded sync", h.syncResp(first).ErrorCode, kerr.RebalanceInProgress)
	if h.answered(second) {
		t.Fatal("a follower's sync answered before the leader's")
	}
	other := h.do(syncReq("g", ids[2], gen, nil), "c")
	// A new member starts the next rebalance.
	h.joinNew("g", "c3")
	for _, tok := range []uint64{second, other} {
		wantCode(t, "sync when the next rebalance starts", h.syncResp(tok).ErrorCode, kerr.RebalanceInProgress)
	}
	checkInvariants(t, h.c)
}

// The leader's assignment replaces every member's: one it leaves out gets
// an empty assignment, not its assignment of the last generation.
func TestSyncLeavesOutAMember(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 2)
	h.do(joinReq("g", ids[0], nil), "c")
	gen := h.joinResp(h.do(joinReq("g", ids[1], nil), "c")).Generation
	h.do(syncReq("g", ids[0], gen, map[string][]byte{ids[0]: []byte("all")}), "c")
	if got := h.syncResp(h.do(syncReq("g", ids[1], gen, nil), "c")).MemberAssignment; len(got) != 0 {
		t.Fatalf("a member the leader left out got %q", got)
	}
}

// A member that leaves while it waits in JoinGroup gets UNKNOWN_MEMBER_ID
// for that join, as Kafka's removeCurrentMemberFromClassicGroup answers it.
func TestLeaveWhileWaitingInJoin(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 3)
	lead := h.do(joinReq("g", ids[0], nil), "c")
	join := h.do(joinReq("g", ids[1], nil), "c")
	if h.answered(join) {
		t.Fatal("the join was answered before the others rejoined")
	}
	resp := h.resp(h.do(leaveReqV5("g", kmsg.LeaveGroupRequestMember{MemberID: ids[1]}), "c")).(*kmsg.LeaveGroupResponse)
	wantCode(t, "leave", resp.Members[0].ErrorCode, nil)
	wantCode(t, "the waiting join", h.joinResp(join).ErrorCode, kerr.UnknownMemberID)
	h.do(joinReq("g", ids[2], nil), "c")
	if r := h.joinResp(lead); r.Generation != gen+1 || len(r.Members) != 2 {
		t.Fatalf("the leader's join %+v", r)
	}
	checkInvariants(t, h.c)
}

// staticGroup forms a Stable group of one dynamic leader and one static
// member; it returns their member ids and the generation.
func (h *harness) staticGroup(group string, inst *string) (leader, static string, gen int32) {
	h.tb.Helper()
	ids, _ := h.stableGroup(group, 1)
	st := h.do(joinReq(group, "", inst), "s")
	lead := h.joinResp(h.do(joinReq(group, ids[0], nil), "c"))
	static = h.joinResp(st).MemberID
	gen = lead.Generation
	h.do(syncReq(group, static, gen, nil), "s")
	wantCode(h.tb, "leader sync", h.syncResp(h.do(syncReq(group, ids[0], gen, map[string][]byte{static: []byte("S")}), "c")).ErrorCode, nil)
	return ids[0], static, gen
}

// Kafka's validateMember: an instance id the group does not know is
// UNKNOWN_MEMBER_ID, one mapped to another member id FENCED_INSTANCE_ID;
// LeaveGroup may name a static member by its instance id alone (an admin's
// removal).
func TestStaticMemberValidation(t *testing.T) {
	inst := kmsg.StringPtr("i")
	h := newHarness(t, testOptions())
	_, static, gen := h.staticGroup("g", inst)
	hb := func(member string, instance *string) int16 {
		req := heartbeatReq("g", member, gen)
		req.InstanceID = instance
		return h.resp(h.do(req, "c")).(*kmsg.HeartbeatResponse).ErrorCode
	}
	sync := func(member string, instance *string) int16 {
		req := syncReq("g", member, gen, nil)
		req.InstanceID = instance
		return h.syncResp(h.do(req, "c")).ErrorCode
	}
	wantCode(t, "heartbeat", hb(static, inst), nil)
	wantCode(t, "heartbeat, unknown instance", hb(static, kmsg.StringPtr("other")), kerr.UnknownMemberID)
	wantCode(t, "heartbeat, another member id", hb("x", inst), kerr.FencedInstanceID)
	wantCode(t, "sync, unknown instance", sync(static, kmsg.StringPtr("other")), kerr.UnknownMemberID)

	leave := func(m kmsg.LeaveGroupRequestMember) int16 {
		return h.resp(h.do(leaveReqV5("g", m), "c")).(*kmsg.LeaveGroupResponse).Members[0].ErrorCode
	}
	wantCode(t, "leave, another member id", leave(kmsg.LeaveGroupRequestMember{MemberID: "x", InstanceID: inst}), kerr.FencedInstanceID)
	wantCode(t, "leave, unknown instance", leave(kmsg.LeaveGroupRequestMember{InstanceID: kmsg.StringPtr("other")}), kerr.UnknownMemberID)
	wantCode(t, "leave, member id with an unknown instance", leave(kmsg.LeaveGroupRequestMember{MemberID: static, InstanceID: kmsg.StringPtr("other")}), kerr.UnknownMemberID)
	if _, ok := h.c.groups["g"].members[static]; !ok || h.c.groups["g"].state != stateStable {
		t.Fatal("a refused leave removed the static member")
	}
	wantCode(t, "leave by instance id", leave(kmsg.LeaveGroupRequestMember{InstanceID: inst}), nil)
	if g := h.c.groups["g"]; g.members[static] != nil || len(g.static) != 0 || g.state != statePreparingRebalance {
		t.Fatalf("after the leave: members %d, static %v, state %v", len(g.members), g.static, g.state)
	}
	checkInvariants(t, h.c)
}

// A static member replaced while its old incarnation waits in SyncGroup:
// that sync is answered FENCED_INSTANCE_ID (Kafka's replaceStaticMember),
// and the group rebalances (the leader may have assigned the old id).
func TestStaticMemberReplacedWhileWaitingInSync(t *testing.T) {
	inst := kmsg.StringPtr("i")
	h := newHarness(t, testOptions())
	leader, static, _ := h.staticGroup("g", inst)
	h.do(joinReq("g", leader, nil), "c")
	sj := joinReq("g", static, inst)
	gen := h.joinResp(h.do(sj, "s")).Generation
	sr := syncReq("g", static, gen, nil)
	sr.InstanceID = inst
	waiting := h.do(sr, "s")
	if h.answered(waiting) {
		t.Fatal("the follower's sync was answered before the leader's")
	}
	again := h.do(joinReq("g", "", inst), "s")
	wantCode(t, "old incarnation's sync", h.syncResp(waiting).ErrorCode, kerr.FencedInstanceID)
	if g := h.c.groups["g"]; g.state != statePreparingRebalance {
		t.Fatalf("state %v after a static member was replaced while CompletingRebalance", g.state)
	}
	lead := h.do(joinReq("g", leader, nil), "c")
	if r := h.joinResp(again); r.ErrorCode != 0 || r.Generation != gen+1 || r.MemberID == static {
		t.Fatalf("new incarnation's join %+v", r)
	}
	wantCode(t, "leader's join", h.joinResp(lead).ErrorCode, nil)
	checkInvariants(t, h.c)
}

// A static member that comes back with protocols that change the group's
// selected protocol makes the group rebalance (Kafka: the selected protocol
// of the next generation differs); with the same choice it does not.
func TestStaticRejoinThatChangesTheProtocolRebalances(t *testing.T) {
	inst := kmsg.StringPtr("i")
	h := newHarness(t, testOptions())
	r := h.joinResp(h.do(joinReq("g", "", inst, "range", "roundrobin"), "s"))
	h.syncResp(h.do(syncReq("g", r.MemberID, r.Generation, nil), "s"))
	same := h.joinResp(h.do(joinReq("g", "", inst, "range", "roundrobin"), "s"))
	if same.ErrorCode != 0 || same.Generation != r.Generation || *same.Protocol != "range" {
		t.Fatalf("rejoin with the same protocols %+v", same)
	}
	changed := h.joinResp(h.do(joinReq("g", "", inst, "roundrobin", "range"), "s"))
	if changed.ErrorCode != 0 || changed.Generation != r.Generation+1 || *changed.Protocol != "roundrobin" || changed.SkipAssignment {
		t.Fatalf("rejoin that changes the selected protocol %+v, want generation %d", changed, r.Generation+1)
	}
	if g := h.c.groups["g"]; g.state != stateCompletingRebalance {
		t.Fatalf("state %v", g.state)
	}
}
