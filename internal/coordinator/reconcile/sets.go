package reconcile

import (
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// Partition lists are ascending and without duplicates (assignor's
// Assignment form); these keep them so.

func intersect(a, b []int32) []int32 {
	var out []int32
	for _, p := range a {
		if _, ok := slices.BinarySearch(b, p); ok {
			out = append(out, p)
		}
	}
	return out
}

func minus(a, b []int32) []int32 {
	var out []int32
	for _, p := range a {
		if _, ok := slices.BinarySearch(b, p); !ok {
			out = append(out, p)
		}
	}
	return out
}

func union(a, b []int32) []int32 {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// put sets topic's partitions in a, leaving no empty entry.
func put(a assignor.Assignment, topic base.TopicID, ps []int32) {
	if len(ps) == 0 {
		delete(a, topic)
		return
	}
	a[topic] = ps
}

// topicsOf is the topics of the assignments, in a fixed order.
func topicsOf(as ...assignor.Assignment) []base.TopicID {
	var ts []base.TopicID
	for _, a := range as {
		for t := range a {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(x, y base.TopicID) int { return slices.Compare(x[:], y[:]) })
	return slices.Compact(ts)
}
