package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// hideOffsetTopics applies DESCRIBE on topics to an OffsetFetch answer, as
// Kafka does: a topic the principal may not describe is left out when the
// client asked for every topic (all), and otherwise answered
// TOPIC_AUTHORIZATION_FAILED with no offset. Topics and partitions are the
// two shapes of the answer (v0-7 and v8+ group entries).
func hideOffsetTopics[T, P any](h *Handler, req *Request, topics []T, all bool, name func(*T) string, parts func(*T) []P, deny func(*P)) []T {
	if h.policy == nil {
		return topics
	}
	kept := topics[:0]
	for i := range topics {
		t := &topics[i]
		if h.allowedTopic(req, acl.OpDescribe, name(t)) {
			kept = append(kept, *t)
			continue
		}
		if all {
			continue
		}
		ps := parts(t)
		for j := range ps {
			deny(&ps[j])
		}
		kept = append(kept, *t)
	}
	return kept
}

// hideOffsetTopicsV0 is hideOffsetTopics for v0-7 answers.
func (h *Handler) hideOffsetTopicsV0(req *Request, resp *kmsg.OffsetFetchResponse, all bool) {
	resp.Topics = hideOffsetTopics(h, req, resp.Topics, all,
		func(t *kmsg.OffsetFetchResponseTopic) string { return t.Topic },
		func(t *kmsg.OffsetFetchResponseTopic) []kmsg.OffsetFetchResponseTopicPartition { return t.Partitions },
		func(p *kmsg.OffsetFetchResponseTopicPartition) {
			p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, nil, topicDenied
		})
}

// hideGroupOffsetTopics is hideOffsetTopics for one group of a v8+ answer.
func (h *Handler) hideGroupOffsetTopics(req *Request, g *kmsg.OffsetFetchResponseGroup, all bool) {
	g.Topics = hideOffsetTopics(h, req, g.Topics, all,
		func(t *kmsg.OffsetFetchResponseGroupTopic) string { return t.Topic },
		func(t *kmsg.OffsetFetchResponseGroupTopic) []kmsg.OffsetFetchResponseGroupTopicPartition {
			return t.Partitions
		},
		func(p *kmsg.OffsetFetchResponseGroupTopicPartition) {
			p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, nil, topicDenied
		})
}

// deniedOffsetGroup is the v8+ answer for a group the principal may not
// DESCRIBE.
func deniedOffsetGroup(id string) kmsg.OffsetFetchResponseGroup {
	g := kmsg.NewOffsetFetchResponseGroup()
	g.Group, g.ErrorCode = id, groupDenied
	return g
}
