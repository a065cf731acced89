package group

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/reconcile"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// A classic leader may hand one partition to two members (a buggy or
// custom assignor); the upgrade to a consumer group keeps it with the
// member that joined first, so that no partition is ever held twice.
func TestOnlineUpgradeKeepsAPartitionClaimedTwiceOnce(t *testing.T) {
	h := newHarness(t, testOptions())
	classics := h.classicGroupAssigning("g", []int32{0, 1}, []int32{1, 2, 3})
	resp := h.cgBeat(cgJoinReq("g", "c", "t1"))
	wantCode(t, "consumer-protocol join of the classic group", resp.ErrorCode, nil)
	cg := h.c.groups["g"].consumer
	if a, b := cg.members[classics[0].id], cg.members[classics[1].id]; !a.Assigned.Equal(tps(cgT1, 0, 1)) || !b.Assigned.Equal(tps(cgT1, 2, 3)) {
		t.Fatalf("after the upgrade: a has %v, b has %v; want 0-1 and 2-3", a.Assigned, b.Assigned)
	}
	h.checkReload()
}

// The classic members of a group that a consumer-protocol join upgrades
// keep their classic session, counted from the upgrade: one that never
// heartbeats again is gone when it ends, not a session later.
func TestOnlineUpgradeArmsTheClassicSessions(t *testing.T) {
	h := newHarness(t, testOptions())
	classics := h.classicGroupOf("g")
	c := &cgClient{id: "c"}
	resp := h.cgBeat(cgJoinReq("g", c.id, "t1"))
	wantCode(t, "consumer-protocol join of the classic group", resp.ErrorCode, nil)
	c.epoch, c.owned = resp.MemberEpoch, assigned(resp)

	h.advance(testSession + time.Second)
	cg := h.c.groups["g"].consumer
	for _, cl := range classics {
		if cg.members[cl.id] != nil {
			t.Fatalf("classic member %s silent for its session after the upgrade is still in", cl.id)
		}
	}
	h.checkReload()
}

// A classic static member that takes over the instance of the last
// consumer-protocol member downgrades the group at the consumer group's
// epoch: the classic member already in goes on at its generation.
func TestStaticReplacementDowngradeKeepsTheGeneration(t *testing.T) {
	h := newHarness(t, testOptions())
	s, cl := h.staticAndClassicJoin(t)
	h.settleMixed("g", []*cgClient{s}, []*classicClient{cl})
	epoch := h.c.groups["g"].consumer.epoch

	back := &classicClient{instance: ptr("i1"), cooperative: true}
	wantCode(t, "the instance back as a classic member", h.joinResp(h.do(back.joinRequest("g"), "back")).ErrorCode, nil)
	g := h.c.groups["g"]
	if g.consumer != nil || g.generation != epoch || cl.gen != epoch {
		t.Fatalf("after the downgrade: consumer %v, generation %d, classic member at %d; want both at the group epoch %d", g.consumer != nil, g.generation, cl.gen, epoch)
	}
	code := h.resp(h.do(heartbeatReq("g", cl.id, cl.gen), "classic")).(*kmsg.HeartbeatResponse).ErrorCode
	wantCode(t, "heartbeat of the classic member at its generation", code, nil)
	h.checkReload()
}

// A downgrade gives each classic member its target assignment, as Kafka's
// ClassicGroup.fromConsumerGroup does, not what it has reconciled so far:
// a partition the leaving member was still revoking belongs to the member
// it was going to, not to nobody.
func TestDowngradeGivesTheTargetAssignment(t *testing.T) {
	classicMember := func(id string) cgRecord {
		return cgRecord{memberMetadataKey("g", id), memberMetadataValue(memberMetadata{ClientID: "client-" + id, ClientHost: "/127.0.0.1",
			SubscribedTopicNames: []string{"t1"}, RebalanceTimeoutMs: 30000, Classic: &classicMemberMetadata{SessionTimeoutMs: 10000,
				SupportedProtocols: []classicProtocol{{Name: "range", Metadata: consumerMeta("t1")}}}})}
	}
	// x and y are classic; c, leaving, still revokes 3, which y waits for.
	var records []runtime.Record
	for _, r := range []cgRecord{classicMember("x"), classicMember("y"), cgMember("c", nil, "t1"), cgMetadata(3),
		cgTarget("x", tps(cgT1, 0, 1)), cgTarget("y", tps(cgT1, 2, 3)), cgTarget("c", noParts), cgTargetEpoch(3),
		cgCurrent("x", 3, 2, reconcile.Stable, tps(cgT1, 0, 1), noParts),
		cgCurrent("y", 3, 2, reconcile.UnreleasedPartitions, tps(cgT1, 2), noParts),
		cgCurrent("c", 2, 1, reconcile.UnrevokedPartitions, noParts, tps(cgT1, 3))} {
		records = append(records, runtime.Record{Key: r.key, Value: r.value})
	}
	h := newHarness(t, testOptions())
	h.c, h.records = replayAll(t, testOptions(), records), records

	wantCode(t, "c leaves", h.cgBeat(cgBeatReq("g", "c", leaveEpoch, nil)).ErrorCode, nil)
	g := h.c.groups["g"]
	if g.consumer != nil || len(g.members) != 2 {
		t.Fatalf("after c left: consumer %v, %d members", g.consumer != nil, len(g.members))
	}
	for id, want := range map[string][]int32{"x": {0, 1}, "y": {2, 3}} {
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(g.members[id].assignment); err != nil || len(a.Topics) != 1 || !slices.Equal(a.Topics[0].Partitions, want) {
			t.Fatalf("classic assignment of %s: %+v (%v), want t1 %v", id, a.Topics, err, want)
		}
	}
	h.checkReload()
}
