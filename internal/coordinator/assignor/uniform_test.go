package assignor

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestUniform(t *testing.T) {
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
		{"several topics go round-robin", Spec{
			Topics:  topics(map[base.TopicID]int32{t1: 3, t2: 3}),
			Members: []Member{mem("a", subs(t1, t2), nil), mem("b", subs(t1, t2), nil)},
		}, "a: t1=[0 2] t2=[1] | b: t1=[1] t2=[0 2]"},
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
		{"a topic loses partitions", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 2}),
			Members: []Member{
				mem("a", subs(t1), Assignment{t1: ps(0, 2)}),
				mem("b", subs(t1), Assignment{t1: ps(1, 3)}),
			},
		}, "a: t1=[0] | b: t1=[1]"},
		{"a topic disappears from Topics", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4}),
			Members: []Member{
				mem("a", subs(t1, t2), Assignment{t1: ps(0, 1), t2: ps(0)}),
				mem("b", subs(t1, t2), Assignment{t1: ps(2, 3), t2: ps(1)}),
			},
		}, "a: t1=[0 1] | b: t1=[2 3]"},
		{"an unsubscribed topic is revoked", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4, t2: 2}),
			Members: []Member{
				mem("a", subs(t1), Assignment{t1: ps(0, 1), t2: ps(0, 1)}),
				mem("b", subs(t1), Assignment{t1: ps(2, 3)}),
			},
		}, "a: t1=[0 1] | b: t1=[2 3]"},
		{"a partition two members claim is reassigned", Spec{
			Topics: topics(map[base.TopicID]int32{t1: 4}),
			Members: []Member{
				mem("a", subs(t1), Assignment{t1: ps(0, 1)}),
				mem("b", subs(t1), Assignment{t1: ps(1, 2)}),
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Uniform{}.Assign(tc.spec)
			if render(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", render(got), tc.want)
			}
			checkResult(t, tc.spec, got)
		})
	}
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
