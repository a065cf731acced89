package assignor

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// genSpec draws a group of up to 8 members and a pool of 6 topic ids, of
// which some exist (up to 20 partitions, possibly none) and some do not.
// Subscriptions are all the same when homogeneous, else drawn per member.
// Current assignments are drawn freely: stale and missing topics,
// partitions out of range, partitions that several members claim.
func genSpec(t *rapid.T, homogeneous bool) Spec {
	pool := make([]base.TopicID, 6)
	spec := Spec{Topics: map[base.TopicID]Topic{}}
	for i := range pool {
		pool[i] = tid(byte(i + 1))
		if rapid.IntRange(0, 5).Draw(t, "exists") > 0 {
			n := rapid.Int32Range(0, 20).Draw(t, "partitions")
			spec.Topics[pool[i]] = Topic{Name: fmt.Sprint(i), Partitions: n}
		}
	}
	drawSubs := func() []base.TopicID {
		var s []base.TopicID
		for _, id := range pool {
			if rapid.Bool().Draw(t, "subscribes") {
				s = append(s, id)
			}
		}
		return s
	}
	shared := drawSubs()
	names := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}), 0, 8, rapid.ID[string]).Draw(t, "members")
	slices.Sort(names)
	for _, name := range names {
		m := Member{ID: name, Subscribed: shared}
		if !homogeneous {
			m.Subscribed = drawSubs()
		}
		if rapid.IntRange(0, 3).Draw(t, "hasCurrent") > 0 {
			m.Current = Assignment{}
			for _, id := range pool {
				if !rapid.Bool().Draw(t, "holds") {
					continue
				}
				ps := rapid.SliceOfDistinct(rapid.Int32Range(0, 23), rapid.ID[int32]).Draw(t, "current")
				if len(ps) > 0 {
					slices.Sort(ps)
					m.Current[id] = ps
				}
			}
		}
		spec.Members = append(spec.Members, m)
	}
	return spec
}

// rebuilt is spec with every map built again in another insertion order
// and the subscriptions reversed: what an assignor computes must not
// depend on either.
func rebuilt(spec Spec) Spec {
	out := Spec{Topics: map[base.TopicID]Topic{}}
	ids := make([]base.TopicID, 0, len(spec.Topics))
	for id := range spec.Topics {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b base.TopicID) int { return -compareTopicIDs(a, b) })
	for _, id := range ids {
		out.Topics[id] = spec.Topics[id]
	}
	for _, m := range spec.Members {
		c := m.Current
		if c != nil {
			c = Assignment{}
			for i := len(ids) - 1; i >= 0; i-- {
				if ps, ok := m.Current[ids[i]]; ok {
					c[ids[i]] = slices.Clone(ps)
				}
			}
			for id, ps := range m.Current {
				c[id] = slices.Clone(ps)
			}
		}
		s := slices.Clone(m.Subscribed)
		slices.Reverse(s)
		out.Members = append(out.Members, Member{ID: m.ID, Subscribed: s, Current: c})
	}
	return out
}

// checkCommon checks what both assignors promise for any spec: the
// contract, determinism, and that the result is a fixed point.
func checkCommon(t *rapid.T, a Assignor, spec Spec) map[string]Assignment {
	res := a.Assign(spec)
	checkResult(t, spec, res)
	if again := a.Assign(spec); !equalResults(res, again) {
		t.Fatalf("not deterministic:\n%s\n%s", render(res), render(again))
	}
	if other := a.Assign(rebuilt(spec)); !equalResults(res, other) {
		t.Fatalf("depends on map order:\n%s\n%s", render(res), render(other))
	}
	if next := a.Assign(withCurrent(spec, res)); !equalResults(res, next) {
		t.Fatalf("not a fixed point:\n%s\n%s", render(res), render(next))
	}
	return res
}

func TestUniformProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		homogeneous := rapid.Bool().Draw(t, "homogeneous")
		spec := genSpec(t, homogeneous)
		res := checkCommon(t, Uniform{}, spec)
		checkNoMoveNarrowsAGap(t, spec, res)
		if !homogeneous {
			return
		}
		if spread := sizeSpread(res); spread > 1 {
			t.Fatalf("sizes differ by %d: %s", spread, render(res))
		}
		checkKeepsWithinQuota(t, spec, res)
	})
}

// checkNoMoveNarrowsAGap checks Uniform's balance: no member holding a
// partition of a topic has two or more partitions more than another
// subscriber of that topic.
func checkNoMoveNarrowsAGap(t *rapid.T, spec Spec, res map[string]Assignment) {
	for _, donor := range spec.Members {
		for id := range res[donor.ID] {
			for _, r := range spec.Members {
				if subscribes(spec, r, id) && res[donor.ID].Size()-res[r.ID].Size() > 1 {
					t.Fatalf("moving a partition of %x from %s to %s would narrow their gap: %s", id, donor.ID, r.ID, render(res))
				}
			}
		}
	}
}

// checkKeepsWithinQuota: with homogeneous subscriptions, a member whose
// valid, unshared Current is within the minimum quota keeps all of it.
func checkKeepsWithinQuota(t *rapid.T, spec Spec, res map[string]Assignment) {
	if len(spec.Members) == 0 {
		return
	}
	total := 0
	for _, id := range spec.Members[0].Subscribed {
		total += int(partitionsOf(spec, id))
	}
	minQuota := total / len(spec.Members)
	for _, m := range spec.Members {
		kept := Assignment{}
		for _, id := range m.Subscribed {
			if ps := exclusiveValid(spec, m, id); len(ps) > 0 {
				kept[id] = ps
			}
		}
		if kept.Size() > minQuota {
			continue
		}
		for id, ps := range kept {
			if !keepsAll(res[m.ID], id, ps) {
				t.Fatalf("member %s lost some of %x %v, within quota %d: %s", m.ID, id, ps, minQuota, render(res))
			}
		}
	}
}

func TestRangeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genSpec(t, rapid.Bool().Draw(t, "homogeneous"))
		res := checkCommon(t, Range{}, spec)
		for id, n := range spec.Topics {
			var subscribers []Member
			for _, m := range spec.Members {
				if subscribes(spec, m, id) {
					subscribers = append(subscribers, m)
				}
			}
			if len(subscribers) == 0 {
				continue
			}
			quota := int(n.Partitions) / len(subscribers)
			lo, hi := int(n.Partitions), 0
			for _, m := range subscribers {
				got := len(res[m.ID][id])
				lo, hi = min(lo, got), max(hi, got)
				// Within quota and unshared, a member's Current stays.
				if ps := exclusiveValid(spec, m, id); len(ps) <= quota && !keepsAll(res[m.ID], id, ps) {
					t.Fatalf("member %s lost some of %x %v, within quota %d: %s", m.ID, id, ps, quota, render(res))
				}
			}
			if hi-lo > 1 {
				t.Fatalf("topic %x: subscriber counts from %d to %d: %s", id, lo, hi, render(res))
			}
		}
	})
}

// TestRangeCoPartitionsFreshGroups: without Current, topics with the same
// partition count and the same subscribers give each member the same
// partition numbers.
func TestRangeCoPartitionsFreshGroups(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genSpec(t, rapid.Bool().Draw(t, "homogeneous"))
		for i := range spec.Members {
			spec.Members[i].Current = nil
		}
		res := Range{}.Assign(spec)
		subscribers := func(id base.TopicID) []string {
			var out []string
			for _, m := range spec.Members {
				if subscribes(spec, m, id) {
					out = append(out, m.ID)
				}
			}
			return out
		}
		for x, tx := range spec.Topics {
			for y, ty := range spec.Topics {
				if tx.Partitions != ty.Partitions || !slices.Equal(subscribers(x), subscribers(y)) {
					continue
				}
				for id, a := range res {
					if !slices.Equal(a[x], a[y]) {
						t.Fatalf("%s holds %v of %x but %v of %x: %s", id, a[x], x, a[y], y, render(res))
					}
				}
			}
		}
	})
}
