package group

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// Members join, heartbeat (owning what they were last told, or still
// owning what they must revoke), leave and go silent at random; the
// records always replay to the live group (cgHarness checks it at every
// step) and no partition is ever held by two members (replay refuses
// that). Then every live member heartbeats as a well-behaved client
// does, and the group settles: Stable, every partition assigned.
func TestConsumerGroupProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newCGHarness(rt, int32(rapid.IntRange(1, 9).Draw(rt, "partitions")))
		h.set.maxSize = 4
		owned := map[string]assignor.Assignment{} // what each client believes it owns
		epochs := map[string]int32{}
		names := []string{"a", "b", "c", "d"}
		steps := rapid.IntRange(1, 30).Draw(rt, "steps")
		for range steps {
			id := rapid.SampledFrom(names).Draw(rt, "member")
			_, in := epochs[id]
			switch action := rapid.IntRange(0, 9).Draw(rt, "action"); {
			case !in || action == 0:
				resp := h.send(join(id, nil))
				if resp.ErrorCode == 0 {
					epochs[id], owned[id] = resp.MemberEpoch, assigned(resp)
				}
			case action == 1:
				h.send(leaveReq(id, -1, nil))
				delete(epochs, id)
				delete(owned, id)
			case action == 2:
				h.tick(time.Duration(rapid.IntRange(1, 50).Draw(rt, "seconds")) * time.Second)
				for id := range epochs {
					if h.cg == nil || h.cg.members[id] == nil {
						delete(epochs, id) // fenced by its session or revocation time
					}
				}
			default:
				mine := owned[id]
				if rapid.Bool().Draw(rt, "revokes") {
					mine = intersectAssignment(mine, h.cg.membersAssigned(id))
				}
				resp := h.send(beat(id, epochs[id], mine))
				if resp.ErrorCode != 0 {
					delete(epochs, id) // fenced: the client joins again next time
					continue
				}
				epochs[id] = resp.MemberEpoch
				if resp.Assignment != nil {
					owned[id] = assigned(resp)
				}
			}
		}
		if h.cg == nil {
			return
		}
		for _, id := range h.cg.memberIDs() {
			if _, ok := epochs[id]; !ok {
				h.send(leaveReq(id, h.cg.members[id].Epoch, nil)) // fenced members the client gave up on
			}
		}
		for round := range 4 {
			for _, id := range h.cg.memberIDs() {
				resp := h.send(beat(id, epochs[id], h.cg.members[id].Assigned))
				if resp.ErrorCode != 0 {
					rt.Fatalf("round %d: %s refused: %d", round, id, resp.ErrorCode)
				}
				epochs[id] = resp.MemberEpoch
			}
		}
		if len(h.cg.members) == 0 {
			return
		}
		total := 0
		for _, m := range h.cg.members {
			total += m.Assigned.Size()
		}
		if h.cg.state() != consumerStable || total != int(h.view["t1"].partitions) {
			rt.Fatalf("did not settle: %s, %d of %d partitions assigned: %s", h.cg.state(), total, h.view["t1"].partitions, describeMembers(h.cg))
		}
	})
}

// membersAssigned is what the group has assigned member id (empty when it
// is not a member).
func (cg *consumerGroup) membersAssigned(id string) assignor.Assignment {
	if cg == nil || cg.members[id] == nil {
		return assignor.Assignment{}
	}
	return cg.members[id].Assigned
}

func intersectAssignment(a, b assignor.Assignment) assignor.Assignment {
	out := assignor.Assignment{}
	for t, ps := range a {
		for _, p := range ps {
			if b.Contains(t, p) {
				out[t] = append(out[t], p)
			}
		}
	}
	return out
}

func describeMembers(cg *consumerGroup) string {
	s := ""
	for _, id := range cg.memberIDs() {
		m := cg.members[id]
		s += fmt.Sprintf("%s: epoch %d %v assigned %v pending %v target %v; ", id, m.Epoch, m.State, m.Assigned, m.PendingRevocation, cg.targets[id])
	}
	return s
}
