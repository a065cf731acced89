package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestJoinSingleMember(t *testing.T) {
	h := newHarness(t, testOptions())
	id, tok := h.joinNew("g", "client")
	jr := h.joinResp(tok)
	wantCode(t, "join", jr.ErrorCode, nil)
	if jr.Generation != 1 || jr.LeaderID != id || jr.MemberID != id || *jr.Protocol != "range" || len(jr.Members) != 1 {
		t.Fatalf("join response %+v", jr)
	}
	if len(h.records) != 0 {
		t.Fatalf("the join phase wrote %d records", len(h.records))
	}
	sr := h.syncResp(h.do(syncReq("g", id, 1, map[string][]byte{id: []byte("A")}), "client"))
	wantCode(t, "sync", sr.ErrorCode, nil)
	if string(sr.MemberAssignment) != "A" {
		t.Fatalf("assignment %q", sr.MemberAssignment)
	}
	if len(h.records) != 1 || h.c.groups["g"].state != stateStable {
		t.Fatalf("after sync: %d records, state %v", len(h.records), h.c.groups["g"].state)
	}
}

func TestMemberIDRequiredOnlyFromV4(t *testing.T) {
	h := newHarness(t, testOptions())
	req := joinReq("g", "", nil)
	req.Version = 3
	jr := h.joinResp(h.do(req, "old-client"))
	wantCode(t, "v3 join", jr.ErrorCode, nil)
	if jr.MemberID == "" || jr.Generation != 1 {
		t.Fatalf("v3 join response %+v", jr)
	}
	// v4+: the id comes back with MEMBER_ID_REQUIRED; the member is pending
	// until it joins with it.
	req = joinReq("g", "", nil)
	req.Version = 4
	first := h.joinResp(h.do(req, "new-client"))
	wantCode(t, "v4 join", first.ErrorCode, kerr.MemberIDRequired)
	if _, ok := h.c.groups["g"].pending[first.MemberID]; !ok {
		t.Fatal("the v4+ member is not pending")
	}
	// A pending member that never comes back expires after its session.
	h.advance(testSession)
	if len(h.c.groups["g"].pending) != 0 {
		t.Fatal("the pending member did not expire")
	}
	jr = h.joinResp(h.do(joinReq("g", first.MemberID, nil), "new-client"))
	wantCode(t, "join with expired pending id", jr.ErrorCode, kerr.UnknownMemberID)
}

func TestJoinThreeMembersLeaderAndGenerations(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 3)
	if gen != 3 {
		t.Fatalf("generation %d after three joins, want 3", gen)
	}
	g := h.c.groups["g"]
	if g.leader != ids[0] || g.state != stateStable {
		t.Fatalf("leader %s state %v", g.leader, g.state)
	}
	for _, id := range ids {
		if string(g.members[id].assignment) != "a-"+id {
			t.Fatalf("member %s assignment %q", id, g.members[id].assignment)
		}
	}
	// The leader leaves: the next member in join order leads.
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Version = 3
	lr.Group = "g"
	lr.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}}
	h.do(lr, "c")
	if g.leader != ids[1] || g.state != statePreparingRebalance {
		t.Fatalf("after the leader left: leader %s state %v", g.leader, g.state)
	}
	t1 := h.do(joinReq("g", ids[1], nil), "c")
	t2 := h.do(joinReq("g", ids[2], nil), "c")
	if r := h.joinResp(t1); r.Generation != 4 || r.LeaderID != ids[1] || len(r.Members) != 2 {
		t.Fatalf("new leader's join response %+v", r)
	}
	if r := h.joinResp(t2); r.LeaderID != ids[1] || len(r.Members) != 0 {
		t.Fatalf("follower's join response %+v", r)
	}
}

func TestProtocolSelection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members [][]string
		want    string
	}{
		{"one member takes its first", [][]string{{"range", "roundrobin"}}, "range"},
		{"only common protocols count", [][]string{{"range", "roundrobin"}, {"roundrobin", "range"}, {"roundrobin"}}, "roundrobin"},
		{"most votes win", [][]string{{"a", "b"}, {"b", "a"}, {"b", "a"}}, "b"},
		{"a tie goes to the earliest member", [][]string{{"a", "b"}, {"b", "a"}}, "a"},
		// A name twice in one JoinGroup counts once (it crashed the
		// broker: the count of members supporting it passed the members').
		{"a name twice in one member counts once", [][]string{{"range", "range"}}, "range"},
		{"twice, among others", [][]string{{"a", "b", "a"}, {"b", "a"}}, "a"},
		// A protocol may be named "" (Kafka does not refuse it); it
		// crashed the broker when it was the one chosen.
		{"an empty name alone", [][]string{{""}}, ""},
		{"an empty name, common to all", [][]string{{"", "range"}, {"range", ""}, {""}}, ""},
		{"an empty name, not common", [][]string{{"", "range"}, {"range"}}, "range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testOptions())
			var toks []uint64
			var ids []string
			for i, ps := range tc.members {
				id, tok := h.joinNew("g", "c", ps...)
				ids, toks = append(ids, id), append(toks, tok)
				for j := range i {
					toks[j] = h.do(joinReq("g", ids[j], nil, tc.members[j]...), "c")
				}
			}
			for _, tok := range toks {
				if r := h.joinResp(tok); *r.Protocol != tc.want {
					t.Fatalf("protocol %q, want %q", *r.Protocol, tc.want)
				}
			}
		})
	}
}

// A group whose one protocol is named "" gets through its join and sync,
// and what it wrote loads again (a member with no protocol would not).
func TestEmptyProtocolNamePersists(t *testing.T) {
	h := newHarness(t, testOptions())
	id, tok := h.joinNew("g", "c", "")
	if jr := h.joinResp(tok); jr.ErrorCode != 0 || jr.Protocol == nil || *jr.Protocol != "" {
		t.Fatalf("join: %+v", jr)
	}
	sr := h.syncResp(h.do(syncReq("g", id, 1, map[string][]byte{id: []byte("A")}), "c"))
	wantCode(t, "sync", sr.ErrorCode, nil)
	g := replayAll(t, testOptions(), h.records).groups["g"]
	if g == nil || g.state != stateStable || g.members[id] == nil || g.protocol != "" {
		t.Fatalf("the replayed group: %+v", g)
	}
}

func TestInconsistentProtocol(t *testing.T) {
	h := newHarness(t, testOptions())
	h.stableGroup("g", 1)
	first := h.joinResp(h.do(joinReq("g", "", nil, "other"), "c"))
	wantCode(t, "join with no common protocol", first.ErrorCode, kerr.InconsistentGroupProtocol)
	req := joinReq("g", "", nil)
	req.ProtocolType = "connect"
	wantCode(t, "join with another protocol type", h.joinResp(h.do(req, "c")).ErrorCode, kerr.InconsistentGroupProtocol)
}

func TestInvalidSessionTimeout(t *testing.T) {
	h := newHarness(t, testOptions())
	req := joinReq("g", "", nil)
	req.SessionTimeoutMillis = 10
	wantCode(t, "join", h.joinResp(h.do(req, "c")).ErrorCode, kerr.InvalidSessionTimeout)
	if len(h.c.groups) != 0 {
		t.Fatal("a refused join left a group behind")
	}
}

func TestGroupMaxSize(t *testing.T) {
	opts := testOptions()
	opts.MaxSize = 2
	h := newHarness(t, opts)
	h.stableGroup("g", 2)
	wantCode(t, "third member", h.joinResp(h.do(joinReq("g", "", nil), "c")).ErrorCode, kerr.GroupMaxSizeReached)
}

func TestInitialRebalanceDelay(t *testing.T) {
	opts := testOptions()
	opts.InitialRebalanceDelay = 3 * time.Second
	h := newHarness(t, opts)
	_, tok1 := h.joinNew("g", "c1")
	h.advance(time.Second)
	_, tok2 := h.joinNew("g", "c2")
	h.advance(2 * time.Second) // the delay ends, but a member joined during it
	if h.answered(tok1) || h.answered(tok2) {
		t.Fatal("the join phase ended although a member joined during the initial delay")
	}
	h.advance(3 * time.Second) // nobody joined during the extension
	r1, r2 := h.joinResp(tok1), h.joinResp(tok2)
	if r1.Generation != 1 || r2.Generation != 1 || len(r1.Members) != 2 {
		t.Fatalf("join responses %+v %+v", r1, r2)
	}
}

func TestRebalanceTimeoutRemovesMembersThatDidNotRejoin(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 2)
	newID, newTok := h.joinNew("g", "c3")
	wantCode(t, "heartbeat during rebalance", h.resp(h.do(heartbeatReq("g", ids[1], gen), "c")).(*kmsg.HeartbeatResponse).ErrorCode, kerr.RebalanceInProgress)
	leadTok := h.do(joinReq("g", ids[0], nil), "c")
	// The slow member keeps heartbeating (a client busy in its revoke
	// callback) but does not rejoin: only the rebalance timeout removes it.
	for range 5 {
		h.advance(5 * time.Second)
		h.do(heartbeatReq("g", ids[1], gen), "c")
	}
	h.advance(testRebalance - 26*time.Second)
	if h.answered(leadTok) {
		t.Fatal("the join phase ended before the rebalance timeout with a member missing")
	}
	h.advance(time.Second)
	r := h.joinResp(leadTok)
	if r.Generation != gen+1 || len(r.Members) != 2 {
		t.Fatalf("join response after the timeout %+v", r)
	}
	wantCode(t, "new member join", h.joinResp(newTok).ErrorCode, nil)
	if _, ok := h.c.groups["g"].members[ids[1]]; ok {
		t.Fatal("the member that did not rejoin is still in the group")
	}
	wantCode(t, "kicked member heartbeat", h.resp(h.do(heartbeatReq("g", ids[1], gen), "c")).(*kmsg.HeartbeatResponse).ErrorCode, kerr.UnknownMemberID)
	_ = newID
}

func TestRejoinSupersedesEarlierJoin(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 2)
	first := h.do(joinReq("g", ids[0], nil), "c")
	second := h.do(joinReq("g", ids[0], nil), "c")
	wantCode(t, "superseded join", h.joinResp(first).ErrorCode, kerr.RebalanceInProgress)
	if h.answered(second) {
		t.Fatal("the join phase ended without the second member")
	}
	checkInvariants(t, h.c)
}
