package group

import (
	"testing"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// A member that changes its regular expression for one another member
// has resolved already changes its subscription: the group epoch moves
// on, and the topic it no longer subscribes to goes to the others.
func TestConsumerRegexChangeToAResolvedOneRebalances(t *testing.T) {
	h := newCGHarness(t, 1)
	h.view = viewOf(map[string]int32{"t1": 2, "t2": 2})
	byRegex := func(id, expr string) {
		req := join(id, nil)
		req.SubscribedTopicNames, req.SubscribedTopicRegex = nil, ptr(expr)
		resp := h.send(req)
		wantResp(t, id+" joins", resp, 0, h.cg.epoch, nil)
	}
	byRegex("a", "t1")
	byRegex("b", "t.*")
	byRegex("c", "t.*")
	members := []string{"a", "b", "c"}
	settle := func() {
		for range 5 {
			for _, id := range members {
				m := h.cg.members[id]
				h.send(beat(id, m.Epoch, m.Assigned))
			}
		}
	}
	settle()
	epoch := h.cg.epoch

	req := beat("b", h.cg.members["b"].Epoch, h.cg.members["b"].Assigned)
	req.SubscribedTopicRegex = ptr("t1")
	wantResp(t, "b subscribes to t1 only", h.send(req), 0, epoch, nil)
	if h.cg.epoch != epoch+1 {
		t.Fatalf("group epoch %d after b changed its expression, want %d", h.cg.epoch, epoch+1)
	}
	settle()
	if got := h.cg.members["c"].Assigned[cgTopicIDs["t2"]]; len(got) != 2 {
		t.Fatalf("c has %v of t2, want all of it (b no longer subscribes): %s", got, describeMembers(h.cg))
	}
	if got := h.cg.members["b"].Assigned; !got.Equal(assignor.Assignment{cgT1: got[cgT1]}) {
		t.Fatalf("b has %v, subscribing to t1 only", got)
	}
}

// A heartbeat that says nothing of what the member owns (the client
// sends owned partitions only when they change) still carries the
// assignment when it changed: the member learns of the partitions of a
// topic that grew.
func TestConsumerHeartbeatCarriesAChangedAssignment(t *testing.T) {
	h := newCGHarness(t, 2)
	wantResp(t, "a joins", h.send(join("a", nil)), 0, 1, tps(cgT1, 0, 1))
	wantResp(t, "nothing new", h.send(beat("a", 1, nil)), 0, 1, nil)
	h.view = viewOf(map[string]int32{"t1": 3})
	resp := h.send(beat("a", 1, nil))
	wantResp(t, "after t1 grew", resp, 0, 2, nil)
	if resp.Assignment == nil || !assigned(resp).Equal(tps(cgT1, 0, 1, 2)) {
		t.Fatalf("a heartbeat that got t1-2 answered assignment %v, want t1 0-2", assigned(resp))
	}
}

// A static member that leaves for a while (epoch -2) in the middle of a
// revocation gives up the partitions it was revoking: the member waiting
// for them gets them at once, not when the static member's time runs out.
func TestConsumerStaticLeaveReleasesPendingRevocation(t *testing.T) {
	h := newCGHarness(t, 4)
	i := "instance-1"
	h.send(join("s", &i))
	h.send(join("d", nil))
	keep := h.cg.targets["s"]
	wantResp(t, "s asked to revoke", h.send(beat("s", 1, tps(cgT1, 0, 1, 2, 3))), 0, 1, keep)
	wantResp(t, "d waits", h.send(beat("d", 2, assignor.Assignment{})), 0, 2, assignor.Assignment{})

	wantResp(t, "s leaves for a while", h.send(leaveReq("s", staticLeaveEpoch, &i)), 0, staticLeaveEpoch, nil)
	wantResp(t, "d gets its partitions", h.send(beat("d", 2, assignor.Assignment{})), 0, 2, h.cg.targets["d"])
	if s := h.cg.members["s"]; s.PendingRevocation.Size() != 0 || !s.Assigned.Equal(keep) {
		t.Fatalf("s after its leave: %+v", s.Member)
	}
}
