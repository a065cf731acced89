package group

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// classicClient is what a classic consumer knows of itself: its member
// id, generation and partitions of t1. A cooperative one reports what it
// owns when it joins; an eager one gave it all up first.
type classicClient struct {
	id          string
	instance    *string
	gen         int32
	owned       []int32
	cooperative bool
	twice       bool // its JoinGroup lists its protocol twice
}

// classicSubscription is a v3 consumer-protocol subscription to t1,
// owning owned.
func classicSubscription(owned []int32) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version, m.Topics = 3, []string{"t1"}
	m.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "t1", Partitions: owned}}
	return m.AppendTo(nil)
}

// classicAssignmentOf is a consumer-protocol assignment of partitions of
// t1, as a classic leader writes it.
func classicAssignmentOf(ps ...int32) []byte {
	a := kmsg.ConsumerMemberAssignment{Version: 3, Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t1", Partitions: ps}}}
	return a.AppendTo(nil)
}

func (cl *classicClient) joinRequest(group string) *kmsg.JoinGroupRequest {
	req := joinReq(group, cl.id, cl.instance, "cooperative-sticky")
	var owned []int32
	if cl.cooperative {
		owned = cl.owned
	}
	req.Protocols[0].Metadata = classicSubscription(owned)
	if cl.twice {
		req.Protocols = append(req.Protocols, req.Protocols[0])
	}
	return req
}

// join joins (with the MEMBER_ID_REQUIRED dance) and syncs at once, as a
// member of a consumer group can; it returns the join's code.
func (h *harness) classicJoinSync(group string, cl *classicClient) int16 {
	h.tb.Helper()
	resp := h.joinResp(h.do(cl.joinRequest(group), "classic"))
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		cl.id = resp.MemberID
		resp = h.joinResp(h.do(cl.joinRequest(group), "classic"))
	}
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	cl.id, cl.gen = resp.MemberID, resp.Generation
	sync := h.syncResp(h.do(syncReq(group, cl.id, cl.gen, nil), "classic"))
	if sync.ErrorCode != 0 {
		return sync.ErrorCode
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(sync.MemberAssignment); err != nil {
		h.tb.Fatalf("assignment of %s: %v", cl.id, err)
	}
	cl.owned = nil
	for _, t := range a.Topics {
		cl.owned = append(cl.owned, t.Partitions...)
	}
	slices.Sort(cl.owned)
	return 0
}

// settleMixed runs the members of a group of both protocols until no one
// is told anything new: consumer-protocol members heartbeat, classic ones
// heartbeat and rejoin when told to.
func (h *harness) settleMixed(group string, consumers []*cgClient, classics []*classicClient) {
	h.tb.Helper()
	for range 20 {
		changed := false
		for _, m := range consumers {
			changed = h.beatMember(group, m) || changed
		}
		for _, cl := range classics {
			code := h.resp(h.do(heartbeatReq(group, cl.id, cl.gen), "classic")).(*kmsg.HeartbeatResponse).ErrorCode
			if code == 0 {
				continue
			}
			if code != kerr.RebalanceInProgress.Code && code != kerr.IllegalGeneration.Code {
				h.tb.Fatalf("heartbeat of %s: %v", cl.id, kerr.ErrorForCode(code))
			}
			changed = true
			wantCode(h.tb, "rejoin of "+cl.id, h.classicJoinSync(group, cl), nil)
		}
		if !changed {
			return
		}
	}
	h.tb.Fatalf("group %s does not settle", group)
}

// wantPartitionsShared checks that the members own t1's four partitions,
// each exactly once, and each member at least one.
func wantPartitionsShared(tb tb, consumers []*cgClient, classics []*classicClient) {
	tb.Helper()
	var all []int32
	for _, m := range consumers {
		if len(m.owned[cgT1]) == 0 {
			tb.Fatalf("consumer-protocol member %s owns nothing", m.id)
		}
		all = append(all, m.owned[cgT1]...)
	}
	for _, cl := range classics {
		if len(cl.owned) == 0 {
			tb.Fatalf("classic member %s owns nothing", cl.id)
		}
		all = append(all, cl.owned...)
	}
	slices.Sort(all)
	if !slices.Equal(all, []int32{0, 1, 2, 3}) {
		tb.Fatalf("partitions owned: %v", all)
	}
}

// classicGroupOf forms a classic group of two cooperative members on t1,
// the leader assigning 0-1 and 2-3 as the range assignor would.
func (h *harness) classicGroupOf(group string) []*classicClient {
	h.tb.Helper()
	return h.classicGroupAssigning(group, []int32{0, 1}, []int32{2, 3})
}

// classicGroupAssigning forms a classic group of two cooperative members
// on t1, the leader assigning aParts to itself and bParts to the other.
func (h *harness) classicGroupAssigning(group string, aParts, bParts []int32) []*classicClient {
	h.tb.Helper()
	a, b := &classicClient{cooperative: true}, &classicClient{cooperative: true}
	first := h.joinResp(h.do(a.joinRequest(group), "a"))
	a.id = first.MemberID
	h.do(a.joinRequest(group), "a")
	first = h.joinResp(h.do(b.joinRequest(group), "b"))
	b.id = first.MemberID
	tb := h.do(b.joinRequest(group), "b")
	ta := h.do(a.joinRequest(group), "a")
	ja, jb := h.joinResp(ta), h.joinResp(tb)
	wantCode(h.tb, "classic joins", ja.ErrorCode|jb.ErrorCode, nil)
	a.gen, b.gen = ja.Generation, jb.Generation
	sb := h.do(syncReq(group, b.id, b.gen, nil), "b")
	sa := h.do(syncReq(group, a.id, a.gen, map[string][]byte{a.id: classicAssignmentOf(aParts...), b.id: classicAssignmentOf(bParts...)}), "a")
	wantCode(h.tb, "classic syncs", h.syncResp(sa).ErrorCode|h.syncResp(sb).ErrorCode, nil)
	a.owned, b.owned = slices.Clone(aParts), slices.Clone(bParts)
	return []*classicClient{a, b}
}

// A rolling upgrade, then a rolling downgrade, of a live group: a
// consumer-protocol member joins a classic group, which becomes a
// consumer group whose classic members keep their partitions until they
// rejoin; the partitions end up shared, each once; classic members commit
// at their generation; when the consumer-protocol member leaves, the
// group is classic again, and it rebalances. The records reload to the
// same state at every step.
func TestOnlineUpgradeAndDowngrade(t *testing.T) {
	h := newHarness(t, testOptions())
	classics := h.classicGroupOf("g")
	gen := classics[0].gen
	h.checkReload()

	c := &cgClient{id: "c"}
	resp := h.cgBeat(cgJoinReq("g", c.id, "t1"))
	wantCode(t, "consumer-protocol join of a classic group", resp.ErrorCode, nil)
	c.epoch, c.owned = resp.MemberEpoch, assigned(resp)
	cg := h.c.groups["g"].consumer
	if cg == nil || len(cg.members) != 3 || cg.epoch != gen+1 {
		t.Fatalf("after the upgrade: %+v", cg)
	}
	if a := cg.members[classics[0].id]; a.classic == nil || a.Epoch != gen || !a.Assigned.Equal(tps(cgT1, 0, 1)) {
		t.Fatalf("classic member a after the upgrade: %+v", a)
	}
	h.checkReload()

	h.settleMixed("g", []*cgClient{c}, classics)
	wantPartitionsShared(t, []*cgClient{c}, classics)
	h.checkReload()

	a := classics[0]
	wantCodes := func(what string, r kmsg.Response, want *kerr.Error) {
		t.Helper()
		for _, code := range commitCodes(r) {
			wantCode(t, what, code, want)
		}
	}
	wantCodes("classic commit at its generation", h.resp(h.do(commitReq("g", a.id, a.gen, "t1", 7), "a")), nil)
	wantCodes("classic commit at another", h.resp(h.do(commitReq("g", a.id, a.gen-1, "t1", 7), "a")), kerr.IllegalGeneration)
	d := kmsg.NewPtrConsumerGroupDescribeRequest()
	d.Version, d.Groups = 1, []string{"g"}
	types := map[string]int8{}
	for _, m := range h.resp(h.do(d, "admin")).(*kmsg.ConsumerGroupDescribeResponse).Groups[0].Members {
		types[m.MemberID] = m.MemberType
	}
	if want := map[string]int8{a.id: memberTypeClassic, classics[1].id: memberTypeClassic, "c": memberTypeConsumer}; !maps.Equal(types, want) {
		t.Fatalf("described member types %v, want %v", types, want)
	}

	wantCode(t, "c leaves", h.cgBeat(cgBeatReq("g", c.id, leaveEpoch, nil)).ErrorCode, nil)
	g := h.c.groups["g"]
	if g.consumer != nil || g.state != statePreparingRebalance || len(g.members) != 2 || g.protocol != "cooperative-sticky" {
		t.Fatalf("after the downgrade: consumer %v, state %v, %d members, protocol %q", g.consumer, g.state, len(g.members), g.protocol)
	}
	h.checkReload()
	var toks []uint64
	for _, cl := range classics {
		toks = append(toks, h.do(cl.joinRequest("g"), "classic"))
	}
	leader := h.joinResp(toks[0])
	wantCode(t, "rejoin after the downgrade", leader.ErrorCode|h.joinResp(toks[1]).ErrorCode, nil)
	if leader.Generation != g.generation || len(leader.Members)+len(h.joinResp(toks[1]).Members) != 2 {
		t.Fatalf("the classic rebalance after the downgrade: %+v", leader)
	}
	h.checkReload()
}

// Classic members of a consumer group are checked as Kafka checks them:
// the member must exist and be classic, at its epoch, with the protocol
// its join was answered with; a join must offer a protocol the classic
// members all support; a static member is fenced by its instance.
func TestClassicMemberOfConsumerGroupRefusals(t *testing.T) {
	h := newHarness(t, testOptions())
	consumers := h.stableConsumerGroup("g", 1)
	cl := &classicClient{instance: ptr("i1")}
	wantCode(t, "static classic join", h.classicJoinSync("g", cl), nil)
	h.checkReload()

	sync := func(id string, gen int32, protocol string) int16 {
		req := syncReq("g", id, gen, nil)
		req.ProtocolType, req.Protocol, req.InstanceID = kmsg.StringPtr(consumerProtocolType), kmsg.StringPtr(protocol), cl.instance
		return h.syncResp(h.do(req, "classic")).ErrorCode
	}
	heartbeat := func(id string, gen int32, instance *string) int16 {
		req := heartbeatReq("g", id, gen)
		req.InstanceID = instance
		return h.resp(h.do(req, "classic")).(*kmsg.HeartbeatResponse).ErrorCode
	}
	wantCode(t, "sync at another generation", sync(cl.id, cl.gen+1, "cooperative-sticky"), kerr.IllegalGeneration)
	wantCode(t, "sync with another protocol", sync(cl.id, cl.gen, "range"), kerr.InconsistentGroupProtocol)
	wantCode(t, "sync of another member id for the instance", sync("other", cl.gen, "cooperative-sticky"), kerr.FencedInstanceID)
	wantCode(t, "heartbeat of a consumer-protocol member", heartbeat(consumers[0].id, consumers[0].epoch, nil), kerr.UnknownMemberID)
	wantCode(t, "heartbeat of an unknown member", heartbeat("nobody", 1, nil), kerr.UnknownMemberID)
	wantCode(t, "heartbeat at another generation", heartbeat(cl.id, cl.gen+1, cl.instance), kerr.IllegalGeneration)

	other := joinReq("g", "", nil, "range")
	other.Protocols[0].Metadata = classicSubscription(nil)
	wantCode(t, "join offering no protocol the classic members support", h.joinResp(h.do(other, "x")).ErrorCode, kerr.InconsistentGroupProtocol)
	garbled := joinReq("g", "", nil, "cooperative-sticky")
	garbled.Version, garbled.Protocols[0].Metadata = 3, []byte{0xff}
	wantCode(t, "join with a subscription that does not parse", h.joinResp(h.do(garbled, "x")).ErrorCode, kerr.InconsistentGroupProtocol)
	known := cl.joinRequest("g")
	known.MemberID = "other"
	wantCode(t, "static join under another member id", h.joinResp(h.do(known, "x")).ErrorCode, kerr.FencedInstanceID)

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 5, "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: consumers[0].id}, {InstanceID: ptr("nobody")}, {InstanceID: cl.instance}}
	var codes []int16
	for _, m := range h.resp(h.do(leave, "admin")).(*kmsg.LeaveGroupResponse).Members {
		codes = append(codes, m.ErrorCode)
	}
	if want := []int16{kerr.UnknownMemberID.Code, kerr.UnknownMemberID.Code, 0}; !slices.Equal(codes, want) {
		t.Fatalf("LeaveGroup codes %v, want %v", codes, want)
	}
	cg := h.c.groups["g"].consumer
	if len(cg.members) != 1 || cg.members[consumers[0].id] == nil {
		t.Fatalf("after the static member's leave: %v", cg.memberIDs())
	}
	h.checkReload()
}

// A static classic member that comes back under a new member id takes
// its instance's assignment over.
func TestClassicStaticMemberReplaced(t *testing.T) {
	h := newHarness(t, testOptions())
	consumers := h.stableConsumerGroup("g", 1)
	cl := &classicClient{instance: ptr("i1"), cooperative: true}
	wantCode(t, "static classic join", h.classicJoinSync("g", cl), nil)
	h.settleMixed("g", consumers, []*classicClient{cl})
	before, owned := cl.id, slices.Clone(cl.owned)

	back := &classicClient{instance: ptr("i1"), cooperative: true, owned: owned}
	wantCode(t, "static member back", h.classicJoinSync("g", back), nil)
	cg := h.c.groups["g"].consumer
	if back.id == before || cg.members[before] != nil || cg.static["i1"] != back.id || !slices.Equal(back.owned, owned) {
		t.Fatalf("replacement %s of %s: owns %v (had %v), members %v", back.id, before, back.owned, owned, cg.memberIDs())
	}
	h.checkReload()
}

// A classic member of a consumer group is fenced when it does not sync
// within its rebalance timeout after its join, when it does not rejoin
// within it after being told to, and when its session ends.
func TestClassicMemberOfConsumerGroupTimers(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(h *harness, cl *classicClient)
	}{
		{"no sync", func(h *harness, cl *classicClient) {
			h.do(cl.joinRequest("g"), "classic")
			for range 5 {
				h.advance(testSession / 2)
				wantCode(h.tb, "heartbeat before the sync timeout", h.resp(h.do(heartbeatReq("g", cl.id, cl.gen), "classic")).(*kmsg.HeartbeatResponse).ErrorCode, nil)
			}
			h.advance(testRebalance - 5*testSession/2)
		}},
		{"no rejoin", func(h *harness, cl *classicClient) {
			h.cgBeat(cgJoinReq("g", "late", "t1")) // the group epoch moves on
			for range 4 {
				h.advance(testSession / 2)
				wantCode(h.tb, "told to rejoin", h.resp(h.do(heartbeatReq("g", cl.id, cl.gen), "classic")).(*kmsg.HeartbeatResponse).ErrorCode, kerr.RebalanceInProgress)
			}
			h.advance(testRebalance)
		}},
		{"session", func(h *harness, cl *classicClient) {
			h.advance(testSession + time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testOptions())
			h.stableConsumerGroup("g", 1)
			cl := &classicClient{}
			wantCode(t, "classic join", h.classicJoinSync("g", cl), nil)
			tc.run(h, cl)
			if cg := h.c.groups["g"].consumer; cg.members[cl.id] != nil {
				t.Fatalf("classic member still in: %+v", cg.members[cl.id])
			}
			h.checkReload()
		})
	}
}

// An upgrade needs the policy, the consumer protocol type and members
// whose protocol parses; refused, it writes nothing and the classic
// group stays.
func TestOnlineUpgradeRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy MigrationPolicy
		prep   func(h *harness)
	}{
		{"disabled", MigrationDisabled, func(h *harness) { h.classicGroupOf("g") }},
		{"downgrade only", MigrationDowngrade, func(h *harness) { h.classicGroupOf("g") }},
		{"assignments that do not parse", MigrationBidirectional, func(h *harness) { h.stableGroup("g", 2) }},
		{"another protocol type", MigrationBidirectional, func(h *harness) {
			req := joinReq("g", "", nil)
			req.Version, req.ProtocolType = 3, "connect"
			wantCode(h.tb, "connect join", h.joinResp(h.do(req, "w")).ErrorCode, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			opts.MigrationPolicy = tc.policy
			h := newHarness(t, opts)
			tc.prep(h)
			written := len(h.records)
			resp := h.cgBeat(cgJoinReq("g", "c", "t1"))
			wantCode(t, "consumer-protocol join", resp.ErrorCode, kerr.GroupIDNotFound)
			if g := h.c.groups["g"]; len(h.records) != written || g.consumer != nil || len(g.members) == 0 {
				t.Fatalf("a refused upgrade wrote %d records; group %+v", len(h.records)-written, g)
			}
		})
	}
}

func TestMigrationDecisions(t *testing.T) {
	classic := &classicMemberMetadata{SessionTimeoutMs: 10000}
	groupOf := func(members ...*consumerMember) *consumerGroup {
		cg := newConsumerGroup()
		for _, m := range members {
			cg.members[m.id] = m
		}
		return cg
	}
	cmember := func(id string, c *classicMemberMetadata) *consumerMember {
		m := newConsumerMember(id)
		m.classic = c
		return m
	}
	leaving := cmember("c", nil)
	for _, tc := range []struct {
		name    string
		policy  MigrationPolicy
		maxSize int
		cg      *consumerGroup
		leaving *consumerMember
		want    bool
	}{
		{"last consumer member leaves", MigrationBidirectional, 10, groupOf(leaving, cmember("a", classic)), leaving, true},
		{"downgrade policy", MigrationDowngrade, 10, groupOf(leaving, cmember("a", classic)), leaving, true},
		{"upgrade policy", MigrationUpgrade, 10, groupOf(leaving, cmember("a", classic)), leaving, false},
		{"alone", MigrationBidirectional, 10, groupOf(leaving), leaving, false},
		{"another consumer member stays", MigrationBidirectional, 10, groupOf(leaving, cmember("a", classic), cmember("b", nil)), leaving, false},
		{"a classic member leaves", MigrationBidirectional, 10, groupOf(leaving, cmember("a", classic), cmember("b", classic)), cmember("a", classic), false},
		{"too many for a classic group", MigrationBidirectional, 1, groupOf(leaving, cmember("a", classic), cmember("b", classic)), leaving, false},
		{"as many as a classic group takes", MigrationBidirectional, 2, groupOf(leaving, cmember("a", classic), cmember("b", classic)), leaving, true},
	} {
		if got := downgradeOnLeave(tc.policy, tc.maxSize, tc.cg, tc.leaving); got != tc.want {
			t.Errorf("%s: downgrade %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name     string
		policy   MigrationPolicy
		maxSize  int
		cg       *consumerGroup
		replaced *consumerMember
		want     bool
	}{
		{"the last consumer member's instance", MigrationBidirectional, 10, groupOf(leaving, cmember("a", classic)), leaving, true},
		{"the only member's instance", MigrationDowngrade, 10, groupOf(leaving), leaving, true},
		{"upgrade policy", MigrationUpgrade, 10, groupOf(leaving), leaving, false},
		{"a classic member's instance", MigrationBidirectional, 10, groupOf(leaving, cmember("a", classic)), cmember("a", classic), false},
		{"another consumer member stays", MigrationBidirectional, 10, groupOf(leaving, cmember("b", nil)), leaving, false},
		{"too many for a classic group", MigrationBidirectional, 1, groupOf(leaving, cmember("a", classic)), leaving, false},
	} {
		if got := downgradeOnReplace(tc.policy, tc.maxSize, tc.cg, tc.replaced); got != tc.want {
			t.Errorf("%s: downgrade on replace %v, want %v", tc.name, got, tc.want)
		}
	}
	g := newGroup("g", t0)
	g.protocolType = consumerProtocolType
	g.members = map[string]*member{"a": {id: "a"}, "b": {id: "b"}}
	for _, tc := range []struct {
		policy       MigrationPolicy
		maxSize      int
		protocolType string
		want         bool
	}{
		{MigrationBidirectional, 10, consumerProtocolType, true},
		{MigrationUpgrade, 2, consumerProtocolType, true},
		{MigrationDowngrade, 10, consumerProtocolType, false},
		{MigrationDisabled, 10, consumerProtocolType, false},
		{MigrationBidirectional, 1, consumerProtocolType, false},
		{MigrationBidirectional, 10, "connect", false},
	} {
		g.protocolType = tc.protocolType
		if got := upgradeAllowed(tc.policy, tc.maxSize, g); got != tc.want {
			t.Errorf("upgrade of %q (%d members) with policy %d, max %d: %v, want %v", tc.protocolType, len(g.members), tc.policy, tc.maxSize, got, tc.want)
		}
	}
}

// A classic static member that takes over the instance of the group's
// last consumer-protocol member downgrades the group at once, keeping the
// partitions of the instance; no rebalance.
func TestStaticReplacementDowngrades(t *testing.T) {
	h := newHarness(t, testOptions())
	consumers := h.stableConsumerGroup("g", 1)
	s, cl := h.staticAndClassicJoin(t)
	all := []*cgClient{consumers[0], s}
	h.settleMixed("g", all, []*classicClient{cl})
	wantCode(t, "a leaves", h.cgBeat(cgBeatReq("g", "a", leaveEpoch, nil)).ErrorCode, nil)
	h.settleMixed("g", all[1:], []*classicClient{cl})
	wantPartitionsShared(t, all[1:], []*classicClient{cl})
	instanceOwned := slices.Clone(s.owned[cgT1])

	back := &classicClient{instance: ptr("i1"), cooperative: true}
	join := h.joinResp(h.do(back.joinRequest("g"), "back"))
	wantCode(t, "the instance back as a classic member", join.ErrorCode, nil)
	g := h.c.groups["g"]
	if g.consumer != nil || g.state != stateStable || len(g.members) != 2 || g.static["i1"] != join.MemberID {
		t.Fatalf("after the replacement: consumer %v, state %v, members %v", g.consumer != nil, g.state, slices.Collect(maps.Keys(g.members)))
	}
	sync := h.syncResp(h.do(syncReq("g", join.MemberID, g.generation, nil), "back"))
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(sync.MemberAssignment); sync.ErrorCode != 0 || err != nil || len(a.Topics) != 1 || !slices.Equal(a.Topics[0].Partitions, instanceOwned) {
		t.Fatalf("sync of the replacement: %v, %+v (%v); want the instance's %v", kerr.ErrorForCode(sync.ErrorCode), a, err, instanceOwned)
	}
	h.checkReload()
}

// A classic member whose JoinGroup listed its protocol twice supports it
// once in the classic group its consumer group downgrades to. Counted
// twice, the downgrade was refused, or, next to a member without that
// protocol, took it for common to all; once that member was gone the join
// phase found no protocol common to the one left and the coordinator
// panicked (random walks, seed 502).
func TestDowngradeCountsAProtocolListedTwiceOnce(t *testing.T) {
	h := newHarness(t, testOptions())
	consumers := h.stableConsumerGroup("g", 1)
	cl := &classicClient{twice: true}
	wantCode(t, "classic join listing its protocol twice", h.classicJoinSync("g", cl), nil)
	wantCode(t, "the consumer leaves", h.cgBeat(cgBeatReq("g", consumers[0].id, leaveEpoch, nil)).ErrorCode, nil)
	g := h.c.groups["g"]
	if g.consumer != nil || len(g.members) != 1 || g.supported["cooperative-sticky"] != 1 {
		t.Fatalf("after the downgrade: consumer %v, %d members, supported %v", g.consumer, len(g.members), g.supported)
	}
	h.advance(testRebalance) // the member does not rejoin: the join phase ends on its own
	h.checkReload()
}

// staticAndClassicJoin joins group g (topic t1) with a static
// consumer-protocol member "s" of instance i1 and a cooperative classic
// member.
func (h *harness) staticAndClassicJoin(t *testing.T) (*cgClient, *classicClient) {
	t.Helper()
	static := cgJoinReq("g", "s", "t1")
	static.InstanceID = ptr("i1")
	resp := h.cgBeat(static)
	wantCode(t, "static consumer-protocol join", resp.ErrorCode, nil)
	s := &cgClient{id: "s", epoch: resp.MemberEpoch, owned: assigned(resp)}
	cl := &classicClient{cooperative: true}
	wantCode(t, "classic join", h.classicJoinSync("g", cl), nil)
	return s, cl
}
