package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
)

// A member that joins again under its own id (epoch 0, as a client does
// after FENCED_MEMBER_EPOCH) starts over: what its earlier incarnation
// could still send is fenced. A heartbeat at the epoch before the rejoin
// is no longer the member's previous epoch, and a commit at that epoch no
// longer counts the partitions as held since then (KIP-1251).
func TestConsumerRejoinFencesTheEarlierIncarnation(t *testing.T) {
	h := newCGHarness(t, 4)
	h.send(join("a", nil))
	h.send(join("b", nil))
	h.send(beat("a", 1, tps(cgT1, 0, 1, 2, 3)))
	keep := h.cg.targets["a"]
	wantResp(t, "a revoked", h.send(beat("a", 1, keep)), 0, 2, keep)
	if a := h.cg.members["a"]; a.Epoch != 2 || a.PreviousEpoch != 1 {
		t.Fatalf("a before the rejoin: %+v", a.Member)
	}

	wantResp(t, "a joins again", h.send(join("a", nil)), 0, 2, keep)
	wantResp(t, "a heartbeat of before the rejoin", h.send(beat("a", 1, keep)), kerr.FencedMemberEpoch.Code, 0, nil)
	view := func() TopicsView { return h.view }
	if got := h.cg.commitCheck("a", nil, 1, false, 9).partition(view, "t1", keep[cgT1][0]); got != kerr.StaleMemberEpoch.Code {
		t.Fatalf("a commit at the epoch before the rejoin: %v, want STALE_MEMBER_EPOCH", kerr.ErrorForCode(got))
	}
	if a := h.cg.members["a"]; a.PreviousEpoch != 0 || a.assignedSince[cgT1][keep[cgT1][0]] != 2 {
		t.Fatalf("a after the rejoin: %+v, held since %v", a.Member, a.assignedSince)
	}
}

// A classic member of a consumer group that switches to the consumer
// protocol under its member id, between its JoinGroup and its SyncGroup,
// leaves the classic timers behind: it is not fenced for a SyncGroup it
// will never send while it heartbeats.
func TestConsumerProtocolJoinEndsTheClassicTimers(t *testing.T) {
	h := newHarness(t, testOptions())
	h.stableConsumerGroup("g", 1)
	cl := &classicClient{}
	first := h.joinResp(h.do(cl.joinRequest("g"), "classic"))
	cl.id = first.MemberID
	wantCode(t, "classic join", h.joinResp(h.do(cl.joinRequest("g"), "classic")).ErrorCode, nil)

	resp := h.cgBeat(cgJoinReq("g", cl.id, "t1"))
	wantCode(t, "the same member joins with the consumer protocol", resp.ErrorCode, nil)
	m := &cgClient{id: cl.id, epoch: resp.MemberEpoch, owned: assigned(resp)}
	for elapsed := time.Duration(0); elapsed <= testRebalance+testSession; elapsed += testSession / 2 {
		h.advance(testSession / 2)
		h.beatMember("g", m)
	}
	if cm := h.c.groups["g"].consumer.members[cl.id]; cm == nil || cm.classic != nil {
		t.Fatalf("the member after its classic rebalance timeout: %+v", cm)
	}
	h.checkReload()
}

// A classic member of a consumer group told to rejoin
// (REBALANCE_IN_PROGRESS) that keeps heartbeating but never rejoins is
// fenced once its rebalance timeout runs out, though its session is kept.
func TestClassicMemberThatNeverRejoinsIsFenced(t *testing.T) {
	h := newHarness(t, testOptions())
	h.stableConsumerGroup("g", 1)
	cl := &classicClient{}
	wantCode(t, "classic join", h.classicJoinSync("g", cl), nil)
	h.cgBeat(cgJoinReq("g", "late", "t1")) // the group epoch moves on
	for elapsed := time.Duration(0); elapsed < testRebalance+testSession; elapsed += testSession / 2 {
		if h.c.groups["g"].consumer.members[cl.id] == nil {
			break
		}
		if elapsed >= testRebalance+testSession/2 {
			t.Fatalf("classic member still in %v after it was told to rejoin", elapsed)
		}
		code := h.resp(h.do(heartbeatReq("g", cl.id, cl.gen), "classic")).(*kmsg.HeartbeatResponse).ErrorCode
		wantCode(t, "heartbeat of a member told to rejoin", code, kerr.RebalanceInProgress)
		h.advance(testSession / 2)
	}
	if h.c.groups["g"].consumer.members[cl.id] != nil {
		t.Fatal("classic member that never rejoined is still in")
	}
	h.checkReload()
}

// A classic member of a consumer group that joined and synced is not
// fenced by its sync timer: it stays as long as it heartbeats.
func TestClassicMemberThatSyncedStays(t *testing.T) {
	h := newHarness(t, testOptions())
	consumers := h.stableConsumerGroup("g", 1)
	cl := &classicClient{cooperative: true}
	wantCode(t, "classic join and sync", h.classicJoinSync("g", cl), nil)
	h.settleMixed("g", consumers, []*classicClient{cl})
	for elapsed := time.Duration(0); elapsed <= testRebalance+testSession; elapsed += testSession / 2 {
		h.advance(testSession / 2)
		code := h.resp(h.do(heartbeatReq("g", cl.id, cl.gen), "classic")).(*kmsg.HeartbeatResponse).ErrorCode
		wantCode(t, "heartbeat of a classic member that synced", code, nil)
		h.beatMember("g", consumers[0])
	}
	h.checkReload()
}

// A classic member waiting for partitions (UnreleasedPartitions) is told
// to rejoin once none of them is held by another member; the partitions
// it already has do not count as held.
func TestClassicMemberWaitingOnUnreleased(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other assignor.Assignment // what b holds
		want  bool
	}{
		{"the partition it waits for is free", tps(cgT1, 3), false},
		{"another member holds it", tps(cgT1, 1), true},
	} {
		cg := replayRecords(t, nil, cgMember("a", nil, "t1"), cgMember("b", nil, "t1"), cgMetadata(2), cgTargetEpoch(2),
			cgTarget("a", tps(cgT1, 0, 1)), cgTarget("b", tps(cgT1, 2, 3)),
			cgCurrent("a", 2, 1, reconcile.UnreleasedPartitions, tps(cgT1, 0), noParts),
			cgCurrent("b", 2, 1, reconcile.Stable, tc.other, noParts))
		if got := cg.waitingOnUnreleased(cg.members["a"]); got != tc.want {
			t.Errorf("%s: waiting %v, want %v", tc.name, got, tc.want)
		}
	}
}

// LeaveGroup of a classic member of a consumer group, by member id and
// instance id, must name the instance's member; a leave moves the group
// epoch on, so that the others are assigned the leaver's partitions.
func TestClassicMemberLeavesAConsumerGroup(t *testing.T) {
	h := newHarness(t, testOptions())
	consumers := h.stableConsumerGroup("g", 1)
	cl := &classicClient{instance: ptr("i1"), cooperative: true}
	wantCode(t, "static classic join", h.classicJoinSync("g", cl), nil)
	h.settleMixed("g", consumers, []*classicClient{cl})
	wantPartitionsShared(t, consumers, []*classicClient{cl})

	leave := func(memberID string) int16 {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group = 5, "g"
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: memberID, InstanceID: cl.instance}}
		return h.resp(h.do(req, "classic")).(*kmsg.LeaveGroupResponse).Members[0].ErrorCode
	}
	wantCode(t, "leave of the instance under another member id", leave("other"), kerr.FencedInstanceID)
	if h.c.groups["g"].consumer.members[cl.id] == nil {
		t.Fatal("a refused leave took the member")
	}
	epoch := h.c.groups["g"].consumer.epoch
	wantCode(t, "leave of the instance's member", leave(cl.id), nil)
	if cg := h.c.groups["g"].consumer; cg.members[cl.id] != nil || cg.epoch != epoch+1 {
		t.Fatalf("after the leave: members %v, epoch %d (was %d)", cg.memberIDs(), cg.epoch, epoch)
	}
	h.settle("g", consumers)
	if !consumers[0].owned.Equal(tps(cgT1, 0, 1, 2, 3)) {
		t.Fatalf("the consumer left owns %v, want all of t1", consumers[0].owned)
	}
	h.checkReload()
}
