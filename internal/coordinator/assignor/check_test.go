package assignor

import (
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// tb is what the checks need of testing.T and rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// partitionsOf is the partition count of topic id, 0 if it is not in Topics.
func partitionsOf(spec Spec, id base.TopicID) int32 {
	return max(spec.Topics[id].Partitions, 0)
}

// subscribes reports whether m subscribes to topic id, an existing one.
func subscribes(spec Spec, m Member, id base.TopicID) bool {
	return partitionsOf(spec, id) > 0 && slices.Contains(m.Subscribed, id)
}

// checkResult checks the contract every assignor keeps: every member has
// an entry; each entry's topics are subscribed and exist, with their
// partitions ascending, in range, without duplicates, never empty; every
// partition of a subscribed topic goes to exactly one member.
func checkResult(t tb, spec Spec, res map[string]Assignment) {
	t.Helper()
	if len(res) != len(spec.Members) {
		t.Fatalf("%d entries for %d members: %s", len(res), len(spec.Members), render(res))
	}
	owners := map[base.TopicID][]int{}
	for _, m := range spec.Members {
		a, ok := res[m.ID]
		if !ok || a == nil {
			t.Fatalf("member %s has no entry: %s", m.ID, render(res))
		}
		for id, ps := range a {
			if !subscribes(spec, m, id) {
				t.Fatalf("member %s got topic %x it does not subscribe to: %s", m.ID, id, render(res))
			}
			if len(ps) == 0 {
				t.Fatalf("member %s has an empty entry for %x", m.ID, id)
			}
			n := partitionsOf(spec, id)
			if owners[id] == nil {
				owners[id] = make([]int, n)
			}
			for i, p := range ps {
				if p < 0 || p >= n {
					t.Fatalf("member %s got partition %d of %x, which has %d", m.ID, p, id, n)
				}
				if i > 0 && ps[i-1] >= p {
					t.Fatalf("member %s: partitions of %x not strictly ascending: %v", m.ID, id, ps)
				}
				owners[id][p]++
			}
		}
	}
	for _, m := range spec.Members {
		for _, id := range m.Subscribed {
			n := partitionsOf(spec, id)
			if n == 0 {
				continue
			}
			if owners[id] == nil {
				t.Fatalf("no partition of subscribed topic %x assigned: %s", id, render(res))
			}
			for p, c := range owners[id] {
				if c != 1 {
					t.Fatalf("partition %d of %x assigned %d times: %s", p, id, c, render(res))
				}
			}
		}
	}
}

// sizeSpread is the largest minus the smallest member size in res.
func sizeSpread(res map[string]Assignment) int {
	lo, hi, first := 0, 0, true
	for _, a := range res {
		n := a.Size()
		if first {
			lo, hi, first = n, n, false
		}
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo
}

// exclusiveValid is the partitions of topic id in m's Current that are
// valid (subscribed, existing, in range) and that no other member claims
// validly (a stale claim of a member no longer subscribed does not count).
func exclusiveValid(spec Spec, m Member, id base.TopicID) []int32 {
	if !subscribes(spec, m, id) {
		return nil
	}
	var out []int32
	for _, p := range m.Current[id] {
		if p < 0 || p >= partitionsOf(spec, id) {
			continue
		}
		claimed := false
		for _, o := range spec.Members {
			if o.ID != m.ID && subscribes(spec, o, id) && o.Current.Contains(id, p) {
				claimed = true
			}
		}
		if !claimed {
			out = append(out, p)
		}
	}
	return out
}

// keepsAll reports whether a holds all of ps of topic id.
func keepsAll(a Assignment, id base.TopicID, ps []int32) bool {
	for _, p := range ps {
		if !a.Contains(id, p) {
			return false
		}
	}
	return true
}
