package reconcile

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

var propTopics = []base.TopicID{tA, tB}

// drawSubset draws a subset of a (per topic, a random subset).
func drawSubset(rt *rapid.T, a assignor.Assignment, label string) assignor.Assignment {
	out := assignor.Assignment{}
	for _, t := range topicsOf(a) {
		var ps []int32
		for _, p := range a[t] {
			if rapid.Bool().Draw(rt, fmt.Sprintf("%s-%d-%d", label, t[0], p)) {
				ps = append(ps, p)
			}
		}
		put(out, t, ps)
	}
	return out
}

// drawAssignment draws partitions 0..7 of the property's topics.
func drawAssignment(rt *rapid.T, label string) assignor.Assignment {
	all := assignor.Assignment{}
	for _, t := range propTopics {
		all[t] = []int32{0, 1, 2, 3, 4, 5, 6, 7}
	}
	return drawSubset(rt, all, label)
}

func unionOf(a, b assignor.Assignment) assignor.Assignment {
	out := a.Clone()
	for t, ps := range b {
		put(out, t, union(out[t], ps))
	}
	return out
}

func minusOf(a, b assignor.Assignment) assignor.Assignment {
	out := assignor.Assignment{}
	for t, ps := range a {
		put(out, t, minus(ps, b[t]))
	}
	return out
}

// A member driven by random targets, other members holding random
// partitions and a client that revokes some of what it is asked to keeps
// the invariants at every step, and reaches its target once the client
// revokes everything and the partitions are free.
func TestNextProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := Member{State: Stable, Assigned: assignor.Assignment{}, PendingRevocation: assignor.Assignment{}}
		targetEpoch := int32(0)
		var target assignor.Assignment
		var subscribed func(base.TopicID) bool
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for i := range steps {
			if i == 0 || rapid.Bool().Draw(rt, "newTarget") {
				targetEpoch += int32(rapid.IntRange(1, 2).Draw(rt, "bump"))
				target = drawAssignment(rt, "target")
				subscribed = subscribedTo(rapid.SliceOfDistinct(rapid.SampledFrom(propTopics), func(t base.TopicID) byte { return t[0] }).Draw(rt, "subscribed")...)
			}
			mine := unionOf(m.Assigned, m.PendingRevocation)
			held := minusOf(drawAssignment(rt, "held"), mine) // one holder per partition
			owned := minusOf(mine, drawSubset(rt, m.PendingRevocation, "revoked"))
			in := Input{TargetEpoch: targetEpoch, Target: target, Subscribed: subscribed,
				Owned: owned, OwnedReported: rapid.Bool().Draw(rt, "reported"),
				SubscriptionChanged: rapid.Bool().Draw(rt, "subscriptionChanged"),
				PartitionEpoch: func(tp base.TopicID, p int32) int32 {
					switch {
					case mine.Contains(tp, p):
						return m.Epoch
					case held.Contains(tp, p):
						return 99
					}
					return -1
				}}
			next, err := Next(m, in)
			if err != nil {
				rt.Fatalf("step %d: %v", i, err)
			}
			checkStep(rt, m, next, in, held)
			m = next
		}

		// Converge: everything free, the client revokes all it is asked to.
		for range 3 {
			in := Input{TargetEpoch: targetEpoch, Target: target, Subscribed: subscribed,
				Owned: m.Assigned, OwnedReported: true, PartitionEpoch: func(base.TopicID, int32) int32 { return -1 }}
			next, err := Next(m, in)
			if err != nil {
				rt.Fatal(err)
			}
			checkStep(rt, m, next, in, assignor.Assignment{})
			m = next
		}
		want := assignor.Assignment{}
		for tp, ps := range target {
			if subscribed(tp) {
				want[tp] = ps
			}
		}
		if m.State != Stable || m.Epoch != targetEpoch || !m.Assigned.Equal(want) {
			rt.Fatalf("did not converge: %+v, want stable at %d with %v", m, targetEpoch, want)
		}
	})
}

func checkStep(rt *rapid.T, prev, next Member, in Input, held assignor.Assignment) {
	rt.Helper()
	mine := unionOf(prev.Assigned, prev.PendingRevocation)
	for tp, ps := range next.Assigned {
		for _, p := range ps {
			if next.PendingRevocation.Contains(tp, p) {
				rt.Fatalf("%v-%d both assigned and pending revocation: %+v", tp[0], p, next)
			}
			if held.Contains(tp, p) {
				rt.Fatalf("%v-%d assigned while another member holds it: %+v", tp[0], p, next)
			}
			if !mine.Contains(tp, p) && !in.Target.Contains(tp, p) {
				rt.Fatalf("%v-%d assigned from outside the target: %+v", tp[0], p, next)
			}
		}
	}
	for tp, ps := range next.PendingRevocation {
		for _, p := range ps {
			if !mine.Contains(tp, p) {
				rt.Fatalf("%v-%d pending revocation but never the member's: %+v", tp[0], p, next)
			}
		}
	}
	if next.Epoch < prev.Epoch || next.Epoch > max(prev.Epoch, in.TargetEpoch) {
		rt.Fatalf("epoch %d -> %d with target %d", prev.Epoch, next.Epoch, in.TargetEpoch)
	}
	if next.State == Stable && next.Epoch == in.TargetEpoch && next.PendingRevocation.Size() != 0 {
		rt.Fatalf("stable with partitions pending revocation: %+v", next)
	}
}
