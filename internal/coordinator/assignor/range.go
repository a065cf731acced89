package assignor

// RangeName is the name of Range.
const RangeName = "range"

// Range is the sticky server-side RangeAssignor of KIP-848, as Kafka first
// wrote it (later Kafka versions dropped the stickiness and rely on the
// order of members by instance id instead). Each topic is divided on its
// own among the members subscribed to it. With P partitions and N
// subscribers, each subscriber's quota is P/N and P%N of them get one
// more, so their counts of the topic differ by at most one.
//
// Without Current assignments, the i-th subscriber (ascending by ID) gets
// the contiguous range [i*q + min(i, r), (i+1)*q + min(i+1, r)) with
// q = P/N and r = P%N: topics with the same partition count and the same
// subscribers are co-partitioned (partition k of each goes to the same
// member), which joins rely on. With Current assignments, a subscriber
// keeps its lowest valid partitions of the topic up to its quota (the
// extra slots go first to the subscribers that hold more than P/N), and
// the rest go in ascending runs to the subscribers below quota. Both steps
// depend only on the topic's partition count, its subscribers and their
// Current partition numbers, so co-partitioned topics stay co-partitioned.
type Range struct{}

var _ Assignor = Range{}

// Name is "range".
func (Range) Name() string { return RangeName }

// Assign computes the target assignment of spec.
func (Range) Assign(spec Spec) map[string]Assignment {
	g := newGroup(spec)
	for t := range g.topics {
		assignRange(g, t)
	}
	return g.result()
}

// assignRange divides topic t among its subscribers.
func assignRange(g *group, t int) {
	ts := &g.topics[t]
	minQuota := len(ts.owners) / len(ts.subscribers)
	extraLeft := len(ts.owners) % len(ts.subscribers)

	// want[i] is what the i-th subscriber lacks to reach minQuota; only
	// the subscribers in unfilled take partitions below.
	want := make([]int, len(ts.subscribers))
	var unfilled []int
	for i, m := range ts.subscribers {
		valid := g.claimOf(m, t)
		keep, takesExtra := stickyKeep(len(valid), minQuota, extraLeft)
		if takesExtra {
			extraLeft--
		}
		for _, p := range valid[:keep] {
			g.own(t, p, m)
		}
		if len(valid) <= minQuota {
			want[i] = minQuota - keep
			unfilled = append(unfilled, i)
		}
	}

	// The unowned partitions, ascending, in consecutive runs to the
	// subscribers below quota, ascending by ID; the first of them take the
	// extra slots that are left.
	next := 0
	for _, i := range unfilled {
		n := want[i]
		if extraLeft > 0 {
			n++
			extraLeft--
		}
		for ; n > 0; n-- {
			for ts.owners[next] != 0 {
				next++
			}
			g.own(t, int32(next), ts.subscribers[i])
		}
	}
}
