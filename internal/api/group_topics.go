package api

import (
	"maps"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/metadata"
)

// GroupTopics is the group coordinator's view of the topics
// (group.Options.Topics): the current metadata image of meta.
func GroupTopics(meta *metadata.Store) func() group.TopicsView {
	return func() group.TopicsView { return imageTopics{meta.Image()} }
}

// imageTopics is a metadata image as consumer groups see the topics.
type imageTopics struct{ img *metadata.Image }

func (v imageTopics) Topic(name string) (base.TopicID, int32, bool) {
	t, ok := v.img.Topics[name]
	if !ok {
		return base.TopicID{}, 0, false
	}
	return t.ID, int32(len(t.Partitions)), true
}

func (v imageTopics) TopicName(id base.TopicID) (string, bool) {
	t, ok := v.img.TopicsByID[id]
	if !ok {
		return "", false
	}
	return t.Name, true
}

// Names is every topic, the internal ones too: Kafka's coordinator
// resolves a group's regular expressions against every topic in its
// metadata image, and a client that subscribes to __consumer_offsets by
// expression is assigned it (franz-go's Test848RegexBrokerResolves).
func (v imageTopics) Names() []string {
	return slices.Sorted(maps.Keys(v.img.Topics))
}

func (v imageTopics) Version() int64 { return int64(v.img.Version) }
