package assignor

import "slices"

// UniformName is the name of Uniform, KIP-848's default server assignor.
const UniformName = "uniform"

// Uniform is Kafka's UniformAssignor: it spreads the partitions of the
// subscribed topics evenly over the members, keeping as much of each
// member's Current as balance allows (balance first, then stickiness).
//
// When every member subscribes to the same topics (homogeneous) the sizes
// of the members' assignments differ by at most one. Otherwise
// (heterogeneous) no single move of a partition, from a member to another
// subscriber of its topic, can narrow the gap between them: each topic's
// subscribers are balanced as far as their subscriptions let them be.
type Uniform struct{}

var _ Assignor = Uniform{}

// Name is "uniform".
func (Uniform) Name() string { return UniformName }

// Assign computes the target assignment of spec.
func (Uniform) Assign(spec Spec) map[string]Assignment {
	g := newGroup(spec)
	if homogeneous(g.subs) {
		assignHomogeneous(g)
	} else {
		assignHeterogeneous(g)
	}
	return g.result()
}

// homogeneous reports whether every member subscribes to the same topics.
func homogeneous(subs [][]int) bool {
	for _, s := range subs {
		if !slices.Equal(s, subs[0]) {
			return false
		}
	}
	return true
}

// assignHomogeneous is Kafka's OptimizedUniformAssignmentBuilder. With T
// partitions and M members, every member's quota is T/M, and T%M members
// get one more. Each member, ascending by ID, keeps its valid Current up
// to T/M, and one more if it holds more than that while an extra slot is
// left (so the extra slots first go where they save a move). The
// partitions left over, ascending by topic id then partition, go
// round-robin to the members below quota, which spreads every topic over
// them; the extra slots still free go to the first of them to reach T/M.
func assignHomogeneous(g *group) {
	members := len(g.members)
	if members == 0 || len(g.topics) == 0 {
		return
	}
	total := 0
	for _, ts := range g.topics {
		total += len(ts.owners)
	}
	minQuota, extraLeft := total/members, total%members

	// need[m] is what member m lacks to reach minQuota.
	need := make([]int, members)
	var unfilled []int
	for m := range members {
		var valid []tp
		for _, c := range g.claims[m] {
			for _, p := range c.partitions {
				valid = append(valid, tp{c.topic, p})
			}
		}
		keep, takesExtra := stickyKeep(len(valid), minQuota, extraLeft)
		if takesExtra {
			extraLeft--
		}
		for _, x := range valid[:keep] {
			g.own(x.topic, x.partition, m)
		}
		// A member that holds more than minQuota but found no extra slot
		// left can take nothing more: the slots only run out.
		if len(valid) <= minQuota {
			need[m] = minQuota - keep
			unfilled = append(unfilled, m)
		}
	}
	fillRoundRobin(g, unfilled, need, extraLeft)
}

// tp is one partition of one topic (by topic number).
type tp struct {
	topic     int
	partition int32
}

// fillRoundRobin gives every unowned partition to the next member of the
// queue that can take it: one still below minQuota (need > 0) or, while
// extra slots remain, one at minQuota that has no extra yet. The slots
// exactly cover the unowned partitions, so every one finds a taker.
func fillRoundRobin(g *group, queue []int, need []int, extraLeft int) {
	hasExtra := make([]bool, len(need))
	open := func(m int) bool { return need[m] > 0 || (!hasExtra[m] && extraLeft > 0) }
	for t := range g.topics {
		for p, o := range g.topics[t].owners {
			if o != 0 {
				continue
			}
			for taken := false; !taken; {
				if len(queue) == 0 {
					panic("assignor: no member left below quota for an unassigned partition")
				}
				m := queue[0]
				queue = queue[1:]
				if taken = open(m); taken {
					g.own(t, int32(p), m)
					if need[m] > 0 {
						need[m]--
					} else {
						hasExtra[m] = true
						extraLeft--
					}
				}
				if open(m) {
					queue = append(queue, m)
				}
			}
		}
	}
}
