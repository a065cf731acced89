package api

import (
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

// Names leaves out the internal topics, which no regular expression
// subscribes to.
func (v imageTopics) Names() []string {
	names := make([]string, 0, len(v.img.Topics))
	for name := range v.img.Topics {
		if !isInternalTopic(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func (v imageTopics) Version() int64 { return int64(v.img.Version) }
