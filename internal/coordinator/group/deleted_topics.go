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
// The coordinator looks for deletions whenever the topics' version moved
// since its last look, at every Tick and before it handles a request: a
// client that sees a topic created again finds the old one's offsets gone,
// and a commit to the new topic never lands before the tombstones of the
// old. It looks only at the topics it holds state of (offsetTopics, the
// share groups' state topics), not at every topic, as the version moves
// with every leader and ISR change. Like Kafka's, which hears of a
// deletion only while it runs, it does not see a deletion that happened
// before it first looked (a reload).

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
		names = deletedNames(slices.Sorted(maps.Keys(c.offsetTopics)), prev, view)
		ids = deletedIDs(c.shareStateTopics(), prev, view)
	}
	if txn && (len(names) > 0 || len(ids) > 0) {
		return false
	}
	c.topicsSeen = view
	if len(names) > 0 {
		c.dropOffsetsOf(names, res)
	}
	if len(ids) > 0 {
		c.dropShareStateOf(ids, res)
	}
	return true
}

// deletedNames are the names, of those given, of topics that prev has and
// cur no longer does: the name is gone, or names another topic (deleted
// and created again).
func deletedNames(names []string, prev, cur TopicsView) []string {
	var out []string
	for _, name := range names {
		was, _, ok := prev.Topic(name)
		if !ok {
			continue
		}
		if now, _, ok := cur.Topic(name); !ok || now != was {
			out = append(out, name)
		}
	}
	return out
}

// deletedIDs are the ids, of those given, of topics that prev has and cur
// does not.
func deletedIDs(ids []base.TopicID, prev, cur TopicsView) []base.TopicID {
	var out []base.TopicID
	for _, id := range ids {
		if _, ok := prev.TopicName(id); !ok {
			continue
		}
		if _, ok := cur.TopicName(id); !ok {
			out = append(out, id)
		}
	}
	return out
}

// noteOffsetTopic adds a topic to those the coordinator holds offsets of.
func (c *Coordinator) noteOffsetTopic(name string) {
	if c.offsetTopics == nil {
		c.offsetTopics = map[string]struct{}{}
	}
	c.offsetTopics[name] = struct{}{}
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
	for _, name := range names {
		delete(c.offsetTopics, name)
	}
}

// shareStateTopics lists the topics some share group has state of.
func (c *Coordinator) shareStateTopics() []base.TopicID {
	seen := map[base.TopicID]bool{}
	var ids []base.TopicID
	for _, sg := range c.shares {
		for id := range sg.stateTopics {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
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
