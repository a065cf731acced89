package api

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// Shared by OffsetCommit and TxnOffsetCommit, whose requests and responses
// have the same shape in different kmsg types: partitions the principal may
// not read, or of topics that do not exist, are answered here, the others
// by the group coordinator, and the two answers are merged.

// commitRefusal returns the code a committed partition is answered with
// before the coordinator sees it: TOPIC_AUTHORIZATION_FAILED without READ
// on its topic, UNKNOWN_TOPIC_OR_PARTITION if it does not exist; 0 to
// commit it.
func (h *Handler) commitRefusal(req *Request, img *metadata.Image) func(topic string, p int32) int16 {
	return func(topic string, p int32) int16 {
		switch {
		case !h.allowedTopic(req, acl.OpRead, topic):
			return topicDenied
		case !partitionExists(img, topic, p):
			return kerr.UnknownTopicOrPartition.Code
		}
		return 0
	}
}

// partitionExists reports whether img has topic with partition p.
func partitionExists(img *metadata.Image, topic string, p int32) bool {
	t := img.Topics[topic]
	return t != nil && p >= 0 && int(p) < len(t.Partitions)
}

// mergeByTopic adds refused's partitions to topics, under the entry of the
// same topic when there is one: clients index a commit response by topic
// name, and a second entry of a topic would hide one of the two.
func mergeByTopic[T, P any](topics, refused []T, name func(*T) string, parts func(*T) *[]P) []T {
	for i := range refused {
		rt := &refused[i]
		merged := false
		for j := range topics {
			if name(&topics[j]) == name(rt) {
				*parts(&topics[j]) = append(*parts(&topics[j]), *parts(rt)...)
				merged = true
				break
			}
		}
		if !merged {
			topics = append(topics, *rt)
		}
	}
	return topics
}
