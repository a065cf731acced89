package assignor

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestUniform(t *testing.T) {
	runAssignCases(t, Uniform{}, append(sharedCases(), []assignCase{
		{"several topics go round-robin", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 3, t2: 3}),
			Members: []Member{mem("a", subs(t1, t2), nil), mem("b", subs(t1, t2), nil)},
		}, "a: t1=[0 2] t2=[1] | b: t1=[1] t2=[0 2]"},
		{"a topic loses partitions", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 2}),
			Members: []Member{
				mem("a", subs(t1), Assignment{t1: ps(0, 2)}),
				mem("b", subs(t1), Assignment{t1: ps(1, 3)}),
			},
		}, "a: t1=[0] | b: t1=[1]"},
		{"an unsubscribed topic is revoked", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4, t2: 2}),
			Members: []Member{
				mem("a", subs(t1), Assignment{t1: ps(0, 1), t2: ps(0, 1)}),
				mem("b", subs(t1), Assignment{t1: ps(2, 3)}),
			},
		}, "a: t1=[0 1] | b: t1=[2 3]"},
		{"heterogeneous: the crowded topic first", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 3, t2: 3}),
			Members: []Member{mem("a", subs(t1, t2), nil), mem("b", subs(t2), nil)},
		}, "a: t1=[0 1 2] | b: t2=[0 1 2]"},
		{"heterogeneous: balance moves from the loaded member", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 2, t2: 4}),
			Members: []Member{
				mem("a", subs(t1, t2), Assignment{t1: ps(0, 1), t2: ps(0, 1, 2, 3)}),
				mem("b", subs(t2), nil),
			},
		}, "a: t1=[0 1] t2=[0] | b: t2=[1 2 3]"},
		// Each topic's subscribers end within one of each other, but the
		// chain a > b > c stays 5/4/3: moving a partition of t2 from a to
		// b and one of t3 from b to c at once would even it, and neither
		// move alone narrows a gap. Kafka's builder stops there too.
		{"heterogeneous: balance is per topic", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4, t2: 4, t3: 4}),
			Members: []Member{
				mem("a", subs(t1, t2), Assignment{t1: ps(0, 1, 2, 3)}),
				mem("b", subs(t2, t3), Assignment{t2: ps(0, 1, 2, 3), t3: ps(0, 1, 2, 3)}),
				mem("c", subs(t3), nil),
			},
		}, "a: t1=[0 1 2 3] t2=[2] | b: t2=[0 1 3] t3=[0] | c: t3=[1 2 3]"},
		{"heterogeneous: a fresh group", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4, t2: 4, t3: 4}),
			Members: []Member{
				mem("a", subs(t1, t2), nil),
				mem("b", subs(t2, t3), nil),
				mem("c", subs(t3), nil),
			},
		}, "a: t1=[0 1 2 3] | b: t2=[0 1 2 3] | c: t3=[0 1 2 3]"},
	}...))
}

// TestUniformNewMemberMovesOnlyTheExcess: in a stable group of 4 members
// holding 10 partitions each of 40, a fifth member takes 8, all from the
// others' excess, and nobody else moves.
func TestUniformNewMemberMovesOnlyTheExcess(t *testing.T) {
	spec := Spec{Topics: topics(map[base.TopicID]int32{t1: 25, t2: 15})}
	for _, id := range []string{"b", "c", "d", "e"} {
		spec.Members = append(spec.Members, mem(id, subs(t1, t2), nil))
	}
	stable := Uniform{}.Assign(spec)
	spec = withCurrent(spec, stable)
	spec.Members = append([]Member{mem("a", subs(t1, t2), nil)}, spec.Members...)
	next := Uniform{}.Assign(spec)
	checkResult(t, spec, next)
	if got := next["a"].Size(); got != 8 {
		t.Fatalf("new member got %d partitions, want 8", got)
	}
	if got := moved(stable, next); got != 8 {
		t.Fatalf("%d partitions moved, want 8: %s", got, render(next))
	}
}

func TestUniformPanicsOnUnsortedMembers(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Uniform{}.Assign(Spec{Members: []Member{mem("b", nil, nil), mem("a", nil, nil)}})
}
