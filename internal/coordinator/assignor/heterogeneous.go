package assignor

import (
	"container/heap"
	"slices"
)

// assignHeterogeneous is Kafka's UniformHeterogeneousAssignmentBuilder,
// for members that subscribe to different topics:
//  1. every member keeps all of its valid Current;
//  2. the unowned partitions, topic by topic in topicOrder and ascending
//     within a topic, each go to the least-loaded subscriber of the topic
//     (ties to the lowest ID);
//  3. balance moves partitions from more-loaded to less-loaded
//     subscribers of their topic until no single move narrows a gap.
func assignHeterogeneous(g *group) {
	load := make([]int, len(g.members))
	for m := range g.members {
		for _, c := range g.claims[m] {
			for _, p := range c.partitions {
				g.own(c.topic, p, m)
				load[m]++
			}
		}
	}
	order := topicOrder(g)
	for _, t := range order {
		fillLeastLoaded(g, t, load)
	}
	balance(g, order, load)
}

// topicOrder is the topic numbers, the topics with the most partitions per
// subscriber first (they are the hardest to spread), then those with fewer
// subscribers, then ascending by id, as Kafka orders them.
func topicOrder(g *group) []int {
	order := make([]int, len(g.topics))
	for t := range order {
		order[t] = t
	}
	slices.SortFunc(order, func(a, b int) int {
		pa, sa := int64(len(g.topics[a].owners)), int64(len(g.topics[a].subscribers))
		pb, sb := int64(len(g.topics[b].owners)), int64(len(g.topics[b].subscribers))
		// pa/sa > pb/sb, without division.
		if d := pb*sa - pa*sb; d != 0 {
			return sign(d)
		}
		if sa != sb {
			return sign(sa - sb)
		}
		return a - b
	})
	return order
}

func sign(d int64) int {
	if d < 0 {
		return -1
	}
	return 1
}

// fillLeastLoaded gives each unowned partition of topic t, ascending, to
// the subscriber of t with the fewest partitions in all (ties to the
// lowest member number).
func fillLeastLoaded(g *group, t int, load []int) {
	ts := &g.topics[t]
	h := &loadHeap{members: slices.Clone(ts.subscribers), load: load}
	heap.Init(h)
	for p, o := range ts.owners {
		if o != 0 {
			continue
		}
		m := h.members[0]
		g.own(t, int32(p), m)
		load[m]++
		heap.Fix(h, 0)
	}
}

// loadHeap orders members by load, then by member number.
type loadHeap struct {
	members []int
	load    []int
}

func (h *loadHeap) Len() int { return len(h.members) }
func (h *loadHeap) Less(i, j int) bool {
	return lighter(h.load, h.members[i], h.members[j])
}
func (h *loadHeap) Swap(i, j int) { h.members[i], h.members[j] = h.members[j], h.members[i] }
func (h *loadHeap) Push(any)      { panic("assignor: loadHeap is fixed-size") }
func (h *loadHeap) Pop() any      { panic("assignor: loadHeap is fixed-size") }

// lighter reports whether member a comes before member b by (load,
// member number).
func lighter(load []int, a, b int) bool {
	return load[a] < load[b] || (load[a] == load[b] && a < b)
}

// balance repeats balanceTopic over every topic, in order, until a whole
// round moves nothing. It terminates: each move takes a partition from a
// member with load x to one with load y <= x-2, which lowers the sum of
// the squared loads by 2(x-y-1) >= 2, so there are at most sumSq/2 moves.
func balance(g *group, order []int, load []int) {
	sumSq := 0
	for _, l := range load {
		sumSq += l * l
	}
	held := make([][]int32, len(g.members))
	for rounds := 0; ; rounds++ {
		if rounds > sumSq/2+1 {
			panic("assignor: balance does not converge")
		}
		moved := false
		for _, t := range order {
			if balanceTopic(g, t, load, held) {
				moved = true
			}
		}
		if !moved {
			return
		}
	}
}

// balanceTopic moves partitions of topic t from its most-loaded subscriber
// that holds one (ties to the highest member number; its highest
// partition) to its least-loaded subscriber (ties to the lowest), while
// their loads differ by two or more. When it stops, no move of a partition
// of t to another subscriber of t narrows a gap. It reports whether it
// moved anything. held is scratch space, one slot per member.
func balanceTopic(g *group, t int, load []int, held [][]int32) bool {
	ts := &g.topics[t]
	lo, hi := load[ts.subscribers[0]], load[ts.subscribers[0]]
	for _, m := range ts.subscribers {
		lo, hi = min(lo, load[m]), max(hi, load[m])
	}
	if hi-lo <= 1 {
		return false
	}
	for _, m := range ts.subscribers {
		held[m] = held[m][:0]
	}
	for p, o := range ts.owners {
		m, _ := o.member()
		held[m] = append(held[m], int32(p))
	}
	moved := false
	for {
		donor, receiver := ts.subscribers[0], ts.subscribers[0]
		found := false
		for _, m := range ts.subscribers {
			if len(held[m]) > 0 && (!found || lighter(load, donor, m)) {
				donor, found = m, true
			}
			if lighter(load, m, receiver) {
				receiver = m
			}
		}
		if load[donor]-load[receiver] <= 1 {
			return moved
		}
		p := held[donor][len(held[donor])-1]
		held[donor] = held[donor][:len(held[donor])-1]
		i, _ := slices.BinarySearch(held[receiver], p)
		held[receiver] = slices.Insert(held[receiver], i, p)
		g.own(t, p, receiver)
		load[donor]--
		load[receiver]++
		moved = true
	}
}
