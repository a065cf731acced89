package assignor

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// tid is a topic id whose last byte is n.
func tid(n byte) base.TopicID {
	var id base.TopicID
	id[15] = n
	return id
}

var t1, t2, t3 = tid(1), tid(2), tid(3)

// topics is a Topics map of the given partition counts.
func topics(counts map[base.TopicID]int32) map[base.TopicID]Topic {
	out := make(map[base.TopicID]Topic, len(counts))
	for id, n := range counts {
		out[id] = Topic{Name: fmt.Sprintf("topic-%d", id[15]), Partitions: n}
	}
	return out
}

func mem(id string, subs []base.TopicID, current Assignment) Member {
	return Member{ID: id, Subscribed: subs, Current: current}
}

func subs(ids ...base.TopicID) []base.TopicID { return ids }

func ps(p ...int32) []int32 { return p }

// render is a result, members and topics in order, for failure messages
// and comparisons: "a: t1=[0 1] | b: -".
func render(res map[string]Assignment) string {
	ids := make([]string, 0, len(res))
	for id := range res {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s:", id)
		a := res[id]
		if len(a) == 0 {
			b.WriteString(" -")
		}
		tids := make([]base.TopicID, 0, len(a))
		for t := range a {
			tids = append(tids, t)
		}
		slices.SortFunc(tids, compareTopicIDs)
		for _, t := range tids {
			fmt.Fprintf(&b, " t%d=%v", t[15], a[t])
		}
	}
	return b.String()
}

// equalResults reports whether two results give every member the same.
func equalResults(a, b map[string]Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for id, x := range a {
		y, ok := b[id]
		if !ok || !x.Equal(y) {
			return false
		}
	}
	return true
}

// withCurrent is spec with every member's Current replaced by res.
func withCurrent(spec Spec, res map[string]Assignment) Spec {
	out := Spec{Topics: spec.Topics, Members: make([]Member, len(spec.Members))}
	for i, m := range spec.Members {
		m.Current = res[m.ID].Clone()
		out.Members[i] = m
	}
	return out
}

// moved counts the partitions members hold in after but did not in before.
func moved(before, after map[string]Assignment) int {
	n := 0
	for id, a := range after {
		for t, ps := range a {
			for _, p := range ps {
				if !before[id].Contains(t, p) {
					n++
				}
			}
		}
	}
	return n
}

// assignCase is one row of an assignor's table: the spec and its result,
// as render writes it.
type assignCase struct {
	name string
	spec Spec
	want string
}

// sharedCases are the rows both assignors answer alike: one topic, or
// every member subscribed to every topic with a single member.
func sharedCases() []assignCase {
	six := topics(map[base.TopicID]int32{t1: 6})
	return []assignCase{
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
	}
}

// runAssignCases checks each case's result, and the contract on it.
func runAssignCases(t *testing.T, a Assignor, cases []assignCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := a.Assign(tc.spec)
			if render(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", render(got), tc.want)
			}
			checkResult(t, tc.spec, got)
		})
	}
}
