package assignor

import (
	"fmt"
	"slices"
	"strings"

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
