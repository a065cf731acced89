package group

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// topicsView is a TopicsView over a fixed map: each topic's id and
// partition count, by name.
type topicsView map[string]viewTopic

type viewTopic struct {
	id         base.TopicID
	partitions int32
}

var cgTopicIDs = map[string]base.TopicID{"t1": cgT1, "t2": cgT2, "t3": {0xa3}, "__consumer_offsets": {0xcc}}

// viewOf is a view of topics with the partition counts given, their ids
// from cgTopicIDs (the zero id for another name).
func viewOf(counts map[string]int32) topicsView {
	v := topicsView{}
	for name, n := range counts {
		v[name] = viewTopic{cgTopicIDs[name], n}
	}
	return v
}

// namedTopics are topics by name with the ids given (a topic created again
// gets another id).
type namedTopics map[string]base.TopicID

// view is a view of the topics, four partitions each.
func (n namedTopics) view() topicsView {
	v := topicsView{}
	for name, id := range n {
		v[name] = viewTopic{id, 4}
	}
	return v
}

func (v topicsView) Topic(name string) (base.TopicID, int32, bool) {
	t, ok := v[name]
	return t.id, t.partitions, ok
}

func (v topicsView) TopicName(id base.TopicID) (string, bool) {
	for name, t := range v {
		if t.id == id {
			return name, true
		}
	}
	return "", false
}

// Names is the view's topics, ascending.
func (v topicsView) Names() []string {
	return slices.Sorted(maps.Keys(v))
}

// Version is a function of the view's contents, so a changed view has
// another version.
func (v topicsView) Version() int64 {
	h := fnv.New64a()
	for _, name := range v.Names() {
		fmt.Fprintf(h, "%s=%x/%d;", name, v[name].id, v[name].partitions)
	}
	return int64(h.Sum64() >> 1)
}
