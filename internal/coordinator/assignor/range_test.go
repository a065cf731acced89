package assignor

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestRange(t *testing.T) {
	runAssignCases(t, Range{}, append(sharedCases(), []assignCase{
		{"several topics are co-partitioned", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 7, t2: 7}),
			Members: []Member{
				mem("a", subs(t1, t2), nil), mem("b", subs(t1, t2), nil), mem("c", subs(t1, t2), nil),
			},
		}, "a: t1=[0 1 2] t2=[0 1 2] | b: t1=[3 4] t2=[3 4] | c: t1=[5 6] t2=[5 6]"},
		{"topics with other counts divide on their own", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 3, t2: 5}),
			Members: []Member{mem("a", subs(t1, t2), nil), mem("b", subs(t1, t2), nil)},
		}, "a: t1=[0 1] t2=[0 1 2] | b: t1=[2] t2=[3 4]"},
		{"heterogeneous subscriptions", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 3, t2: 4}),
			Members: []Member{mem("a", subs(t1, t2), nil), mem("b", subs(t2), nil)},
		}, "a: t1=[0 1 2] t2=[0 1] | b: t2=[2 3]"},
	}...))
}

// TestRangeStaysCoPartitioned: co-partitioned topics stay co-partitioned
// as members join and leave, since every step decides on partition
// numbers alone.
func TestRangeStaysCoPartitioned(t *testing.T) {
	spec := Spec{Topics: topics(map[base.TopicID]int32{t1: 10, t2: 10, t3: 10})}
	all := subs(t1, t2, t3)
	for _, ids := range [][]string{{"b", "d"}, {"a", "b", "d"}, {"a", "b", "c", "d"}, {"a", "c"}, {"c", "e", "f"}} {
		var next []Member
		for _, id := range ids {
			var current Assignment
			if i := slices.IndexFunc(spec.Members, func(m Member) bool { return m.ID == id }); i >= 0 {
				current = spec.Members[i].Current
			}
			next = append(next, mem(id, all, current))
		}
		spec.Members = next
		res := Range{}.Assign(spec)
		checkResult(t, spec, res)
		for id, a := range res {
			if !slices.Equal(a[t1], a[t2]) || !slices.Equal(a[t1], a[t3]) {
				t.Fatalf("members %v: %s is not co-partitioned: %s", ids, id, render(res))
			}
		}
		spec = withCurrent(spec, res)
	}
}
