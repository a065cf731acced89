package group

import (
	"cmp"
	"maps"
	"slices"
)

// GroupCount is one row of a partition's group census: how many groups of
// a type ("classic", "consumer", "share") are in a state (Kafka's state names, as
// ListGroups shows them). Kafka's group-coordinator-metrics count the same
// (classic-group-count, consumer-group-count by state).
type GroupCount struct {
	Type, State string
	Groups      int
}

// census counts the groups by type and state, ascending by type, then
// state.
func (c *Coordinator) census() []GroupCount {
	counts := map[[2]string]int{}
	for _, g := range c.groups {
		l := g.listed()
		counts[[2]string{l.GroupType, l.GroupState}]++
	}
	for _, sg := range c.shares {
		l := sg.listed()
		counts[[2]string{l.GroupType, l.GroupState}]++
	}
	out := make([]GroupCount, 0, len(counts))
	for _, k := range slices.SortedFunc(maps.Keys(counts), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		out = append(out, GroupCount{Type: k[0], State: k[1], Groups: counts[k]})
	}
	return out
}

// publishCensus hands the census to Options.OnCensus when it changed.
func (c *Coordinator) publishCensus() {
	if c.opts.OnCensus == nil {
		return
	}
	now := c.census()
	if c.censusSent && slices.Equal(now, c.lastCensus) {
		return
	}
	c.lastCensus, c.censusSent = now, true
	c.opts.OnCensus(slices.Clone(now))
}
