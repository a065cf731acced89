package assignor

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// group is the working form of a Spec that both assignors share: members
// numbered by their position in Spec.Members, the subscribed topics that
// exist (with at least one partition) numbered ascending by id, and the
// owner of every partition of those topics.
//
// Invariants: topics is ascending by id; subs[m] and claims[m] are
// ascending by topic number; topics[t].subscribers is ascending by member
// number; the claims of two members never share a partition; a partition
// is owned only by a subscriber of its topic.
type group struct {
	members []Member
	topics  []topicSlots
	// subs[m] is the topic numbers member m subscribes to.
	subs [][]int
	// claims[m] is member m's valid Current: partitions of topics it
	// subscribes to, in range, that no other member claims, ascending,
	// without duplicates. So no two members claim the same partition.
	claims [][]claim
}

type topicSlots struct {
	id          base.TopicID
	subscribers []int
	// owners[p] is the owner of partition p.
	owners []owner
}

// owner is a member number plus one, so that the zero owner is "nobody
// yet" and a fresh owners slice needs no initialisation.
type owner int32

func ownerOf(m int) owner { return owner(m + 1) }

func (o owner) member() (int, bool) { return int(o) - 1, o != 0 }

// claim is a member's valid Current partitions of one topic.
type claim struct {
	topic      int
	partitions []int32
}

// newGroup indexes spec. A member subscribed to a topic that is not in
// spec.Topics (deleted since the member subscribed) or has no partition is
// treated as not subscribed to it: there is nothing of it to assign.
func newGroup(spec Spec) *group {
	mustBeAscending(spec.Members)
	ids := subscribedTopics(spec)
	topicNumber := make(map[base.TopicID]int, len(ids))
	g := &group{
		members: spec.Members,
		topics:  make([]topicSlots, len(ids)),
		subs:    make([][]int, len(spec.Members)),
		claims:  make([][]claim, len(spec.Members)),
	}
	for t, id := range ids {
		topicNumber[id] = t
		g.topics[t] = topicSlots{id: id, owners: make([]owner, spec.Topics[id].Partitions)}
	}
	for m, member := range spec.Members {
		for _, id := range member.Subscribed {
			if t, ok := topicNumber[id]; ok {
				g.subs[m] = append(g.subs[m], t)
			}
		}
		// Subscribed is ascending by contract; sorting again makes the
		// result independent of that, at the cost of a few comparisons.
		slices.Sort(g.subs[m])
		g.subs[m] = slices.Compact(g.subs[m])
		for _, t := range g.subs[m] {
			g.topics[t].subscribers = append(g.topics[t].subscribers, m)
		}
		g.claims[m] = validClaims(member.Current, g.subs[m], g.topics, topicNumber)
	}
	g.dropContested()
	return g
}

// subscribedTopics is the ids of the topics some member subscribes to
// that exist and have partitions, ascending.
func subscribedTopics(spec Spec) []base.TopicID {
	var ids []base.TopicID
	for _, m := range spec.Members {
		for _, id := range m.Subscribed {
			if spec.Topics[id].Partitions > 0 {
				ids = append(ids, id)
			}
		}
	}
	slices.SortFunc(ids, compareTopicIDs)
	return slices.Compact(ids)
}

// validClaims is the part of current that is still valid: topics in subs,
// partitions in range, each once, ascending.
func validClaims(current Assignment, subs []int, topics []topicSlots, topicNumber map[base.TopicID]int) []claim {
	var out []claim
	for id, ps := range current {
		t, ok := topicNumber[id]
		if !ok {
			continue
		}
		if _, ok := slices.BinarySearch(subs, t); !ok {
			continue
		}
		count := int32(len(topics[t].owners))
		var valid []int32
		for _, p := range ps {
			if p >= 0 && p < count {
				valid = append(valid, p)
			}
		}
		if len(valid) == 0 {
			continue
		}
		slices.Sort(valid)
		out = append(out, claim{topic: t, partitions: slices.Compact(valid)})
	}
	slices.SortFunc(out, func(a, b claim) int { return a.topic - b.topic })
	return out
}

// dropContested removes from the claims every partition that two or more
// members claim. Such a Current is corrupt; keeping the partition for
// either member could cost that member partitions that are its alone, so
// it goes back to the pool as if new.
func (g *group) dropContested() {
	claimants := make([][]int32, len(g.topics))
	for _, cs := range g.claims {
		for _, c := range cs {
			if claimants[c.topic] == nil {
				claimants[c.topic] = make([]int32, len(g.topics[c.topic].owners))
			}
			for _, p := range c.partitions {
				claimants[c.topic][p]++
			}
		}
	}
	for m, cs := range g.claims {
		kept := cs[:0]
		for _, c := range cs {
			c.partitions = slices.DeleteFunc(c.partitions, func(p int32) bool { return claimants[c.topic][p] > 1 })
			if len(c.partitions) > 0 {
				kept = append(kept, c)
			}
		}
		g.claims[m] = kept
	}
}

// claimOf is member m's claim on topic t (nil if none).
func (g *group) claimOf(m, t int) []int32 {
	i, ok := slices.BinarySearchFunc(g.claims[m], t, func(c claim, t int) int { return c.topic - t })
	if !ok {
		return nil
	}
	return g.claims[m][i].partitions
}

// own gives partition p of topic t to member m.
func (g *group) own(t int, p int32, m int) {
	g.topics[t].owners[p] = ownerOf(m)
}

// result is the assignment the owners describe. Every partition of every
// topic must have an owner by now: an assignor that leaves one is broken.
func (g *group) result() map[string]Assignment {
	out := make(map[string]Assignment, len(g.members))
	for _, m := range g.members {
		out[m.ID] = Assignment{}
	}
	for _, ts := range g.topics {
		for p, o := range ts.owners {
			m, ok := o.member()
			if !ok {
				panic(fmt.Sprintf("assignor: partition %d of topic %x left unassigned", p, ts.id))
			}
			a := out[g.members[m].ID]
			a[ts.id] = append(a[ts.id], int32(p))
		}
	}
	return out
}

// stickyKeep decides how many of a member's valid Current partitions it
// keeps: up to minQuota, and one more if it holds more than that and one
// of the extraLeft extra slots (quota minQuota+1) is still free. Giving
// the extra slots to the members that already hold more keeps the most
// partitions where they are.
func stickyKeep(valid, minQuota, extraLeft int) (keep int, takesExtra bool) {
	if valid > minQuota && extraLeft > 0 {
		return minQuota + 1, true
	}
	return min(valid, minQuota), false
}

func compareTopicIDs(a, b base.TopicID) int { return bytes.Compare(a[:], b[:]) }

// mustBeAscending asserts Spec's contract that members are strictly
// ascending by ID: the results depend on that order.
func mustBeAscending(members []Member) {
	for i := 1; i < len(members); i++ {
		if members[i-1].ID >= members[i].ID {
			panic(fmt.Sprintf("assignor: members not strictly ascending by ID: %q before %q", members[i-1].ID, members[i].ID))
		}
	}
}
