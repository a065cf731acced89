package assignor

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestRange(t *testing.T) {
	six := topics(map[base.TopicID]int32{t1: 6})
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"empty group", Spec{Topics: six}, ""},
		{"members subscribed to nothing", Spec{Topics: six, Members: []Member{
			mem("a", nil, nil), mem("b", nil, Assignment{t1: ps(0)}),
		}}, "a: - | b: -"},
		{"one member takes everything", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 3, t2: 2}),
			Members: []Member{mem("a", subs(t1, t2), nil)},
		}, "a: t1=[0 1 2] t2=[0 1]"},
		{"more members than partitions", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 2}),
			Members: []Member{mem("a", subs(t1), nil), mem("b", subs(t1), nil), mem("c", subs(t1), nil)},
		}, "a: t1=[0] | b: t1=[1] | c: -"},
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
		{"a new member takes only the excess", Spec{Topics: six, Members: []Member{
			mem("a", subs(t1), Assignment{t1: ps(0, 1, 2)}),
			mem("b", subs(t1), Assignment{t1: ps(3, 4, 5)}),
			mem("c", subs(t1), nil),
		}}, "a: t1=[0 1] | b: t1=[3 4] | c: t1=[2 5]"},
		{"the extra slot goes to a member that holds more", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 7}),
			Members: []Member{
				mem("0", subs(t1), nil),
				mem("a", subs(t1), Assignment{t1: ps(0, 1, 2, 3)}),
				mem("b", subs(t1), Assignment{t1: ps(4, 5, 6)}),
			},
		}, "0: t1=[3 6] | a: t1=[0 1 2] | b: t1=[4 5]"},
		{"a member leaves", Spec{Topics: six, Members: []Member{
			mem("a", subs(t1), Assignment{t1: ps(0, 1)}),
			mem("b", subs(t1), Assignment{t1: ps(2, 3)}),
		}}, "a: t1=[0 1 4] | b: t1=[2 3 5]"},
		{"a topic gains partitions", Spec{Topics: six, Members: []Member{
			mem("a", subs(t1), Assignment{t1: ps(0, 1)}),
			mem("b", subs(t1), Assignment{t1: ps(2, 3)}),
		}}, "a: t1=[0 1 4] | b: t1=[2 3 5]"},
		{"a topic disappears from Topics", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4}),
			Members: []Member{
				mem("a", subs(t1, t2), Assignment{t1: ps(0, 1), t2: ps(0)}),
				mem("b", subs(t1, t2), Assignment{t1: ps(2, 3), t2: ps(1)}),
			},
		}, "a: t1=[0 1] | b: t1=[2 3]"},
		{"a partition two members claim is reassigned", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4}),
			Members: []Member{
				mem("a", subs(t1), Assignment{t1: ps(0, 1)}),
				mem("b", subs(t1), Assignment{t1: ps(1, 2)}),
			},
		}, "a: t1=[0 1] | b: t1=[2 3]"},
		{"heterogeneous subscriptions", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 3, t2: 4}),
			Members: []Member{mem("a", subs(t1, t2), nil), mem("b", subs(t2), nil)},
		}, "a: t1=[0 1 2] t2=[0 1] | b: t2=[2 3]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Range{}.Assign(tc.spec)
			if render(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", render(got), tc.want)
			}
			checkResult(t, tc.spec, got)
		})
	}
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
