package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// OffsetCommit and OffsetFetch v10 name topics by id, not by name (KIP-848).
// The group coordinator works with names: this layer resolves the ids of
// a v10 request against the metadata image, forwards it at v9 (whose
// encoding carries the names), and names the answer's topics by id again.
// An id the image does not know is answered UNKNOWN_TOPIC_ID, as Kafka.
const (
	topicIDsVersion       = 10
	beforeTopicIDsVersion = topicIDsVersion - 1
)

// topicIDs is the ids of the topics a v10 request named, by name.
type topicIDs map[string]base.TopicID

// idOf is the id of topic: the request's, else img's (for topics an
// OffsetFetch of every topic lists), ok false when neither knows it.
func (ids topicIDs) idOf(img *metadata.Image, topic string) (base.TopicID, bool) {
	if id, ok := ids[topic]; ok {
		return id, true
	}
	if t, ok := img.Topics[topic]; ok {
		return t.ID, true
	}
	return base.TopicID{}, false
}

// resolveTopics names the topics of a v10 request (each's id and name
// through the accessors), noting their ids; a topic whose id img does not
// know is answered by refuse instead.
func resolveTopics[T, R any](img *metadata.Image, topics []T, ids topicIDs, id func(*T) base.TopicID, name func(*T) *string, refuse func(*T) R) (named []T, refused []R) {
	named = make([]T, 0, len(topics))
	for _, t := range topics {
		known, ok := img.TopicsByID[id(&t)]
		if !ok {
			refused = append(refused, refuse(&t))
			continue
		}
		*name(&t) = known.Name
		ids[known.Name] = known.ID
		named = append(named, t)
	}
	return named, refused
}

// resolveCommitTopics names a v10 OffsetCommit's topics; those with an id
// img does not know are answered with UNKNOWN_TOPIC_ID.
func resolveCommitTopics(img *metadata.Image, topics []kmsg.OffsetCommitRequestTopic, ids topicIDs) ([]kmsg.OffsetCommitRequestTopic, []kmsg.OffsetCommitResponseTopic) {
	return resolveTopics(img, topics, ids,
		func(t *kmsg.OffsetCommitRequestTopic) base.TopicID { return t.TopicID },
		func(t *kmsg.OffsetCommitRequestTopic) *string { return &t.Topic },
		func(t *kmsg.OffsetCommitRequestTopic) kmsg.OffsetCommitResponseTopic {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			return rt
		})
}

// commitTopicsByID gives each answered topic its id.
func commitTopicsByID(img *metadata.Image, topics []kmsg.OffsetCommitResponseTopic, ids topicIDs) {
	for i := range topics {
		if id, ok := ids.idOf(img, topics[i].Topic); ok {
			topics[i].TopicID = id
		}
	}
}

// resolveFetchTopics names a v10 OffsetFetch group's topics (nil: every
// topic, nothing to resolve); those with an id img does not know are
// answered with UNKNOWN_TOPIC_ID.
func resolveFetchTopics(img *metadata.Image, topics []kmsg.OffsetFetchRequestGroupTopic, ids topicIDs) ([]kmsg.OffsetFetchRequestGroupTopic, []kmsg.OffsetFetchResponseGroupTopic) {
	if topics == nil {
		return nil, nil
	}
	return resolveTopics(img, topics, ids,
		func(t *kmsg.OffsetFetchRequestGroupTopic) base.TopicID { return t.TopicID },
		func(t *kmsg.OffsetFetchRequestGroupTopic) *string { return &t.Topic },
		func(t *kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchResponseGroupTopic {
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				rp.Partition, rp.Offset, rp.ErrorCode = p, -1, kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			return rt
		})
}

// fetchTopicsByID gives each answered topic of a group its id; a topic
// without one (offsets of a deleted topic, listed when the client asked
// for every topic) is left out, as a v10 answer cannot name it.
func fetchTopicsByID(img *metadata.Image, g *kmsg.OffsetFetchResponseGroup, ids topicIDs) {
	kept := g.Topics[:0]
	for _, t := range g.Topics {
		if id, ok := ids.idOf(img, t.Topic); ok {
			t.TopicID = id
			kept = append(kept, t)
		}
	}
	g.Topics = kept
}
