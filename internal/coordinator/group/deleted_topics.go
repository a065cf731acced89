package group

import (
	"maps"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// A deleted topic takes its groups' state with it, as Kafka's
// GroupCoordinator.onPartitionsDeleted: every group's committed and pending
// offsets of the topic get tombstones, and share groups forget its
// share-partition state (their ShareGroupStatePartitionMetadata; the share
// coordinator drops the state itself). Without it, a topic deleted and
// created again under the same name would hand a consumer group the old
// topic's committed offsets, and the group would skip the new topic's
// records below them.
//
// The coordinator finds deletions by comparing the topics it last looked at
// with the current ones (deletedTopics) at every Tick and before it handles
// a request: a client that sees a topic created again finds the old one's
// offsets gone, and a commit to the new topic never lands before the
// tombstones of the old. Like Kafka's, which hears of a deletion only while
// it runs, it does not see a deletion that happened before it first looked
// (a reload).

// applyTopicDeletions applies the deletions between the topics the last
// look saw and view, and reports whether it did. A transactional offset
// commit (txn) cannot carry the tombstones, its records being one batch of
// its producer: while there are deletions to apply, it gets false and is
// refused (retriably), and the next Tick applies them.
func (c *Coordinator) applyTopicDeletions(view TopicsView, txn bool, res *runtime.Result) bool {
	prev := c.topicsSeen
	if prev != nil && prev.Version() == view.Version() {
		return true
	}
	var names []string
	var ids []base.TopicID
	if prev != nil {
		names, ids = deletedTopics(prev, view)
	}
	if txn && len(names) > 0 {
		return false
	}
	c.topicsSeen = view
	if len(names) > 0 {
		c.dropOffsetsOf(names, res)
		c.dropShareStateOf(ids, res)
	}
	return true
}

// deletedTopics lists the topics of prev that cur no longer has: those
// whose name is gone, or names another topic (deleted and created again).
// It returns their names and their ids in prev, in name order.
func deletedTopics(prev, cur TopicsView) (names []string, ids []base.TopicID) {
	for _, name := range prev.Names() {
		was, _, _ := prev.Topic(name)
		now, _, ok := cur.Topic(name)
		if !ok || now != was {
			names, ids = append(names, name), append(ids, was)
		}
	}
	return names, ids
}

// dropOffsetsOf writes a tombstone for every committed or pending offset of
// the named topics, in every group.
func (c *Coordinator) dropOffsetsOf(names []string, res *runtime.Result) {
	for _, id := range slices.Sorted(maps.Keys(c.groups)) {
		g := c.groups[id]
		for _, tp := range g.offsetPartitions() {
			if slices.Contains(names, tp.Topic) {
				c.writeOffsetTombstone(g, tp, res)
			}
		}
		c.dropIfGarbage(g)
	}
}

// dropShareStateOf removes the topics ids from every share group's
// share-partition state metadata.
func (c *Coordinator) dropShareStateOf(ids []base.TopicID, res *runtime.Result) {
	for _, id := range slices.Sorted(maps.Keys(c.shares)) {
		sg := c.shares[id]
		kept := maps.Clone(sg.stateTopics)
		for _, t := range ids {
			delete(kept, t)
		}
		if len(kept) == len(sg.stateTopics) {
			continue
		}
		w := shareWrite{id: id, sg: sg}
		w.writeStateTopics(kept)
		c.applyShareWrite(&w, res)
	}
}
