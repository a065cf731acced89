package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/metadata"
)

// TxnOffsetCommit: offsets committed inside a transaction, served by the
// group's __consumer_offsets partition: they stay pending until the
// transaction's marker commits (or aborts) them. Versions as the group
// coordinator implements them; partitions of topics that do not exist get
// UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
func init() { register(28, 0, groupMax(28), (*Handler).handleTxnOffsetCommit) }

func (h *Handler) handleTxnOffsetCommit(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.TxnOffsetCommitRequest)
	known, unknown := splitTxnCommitTopics(h.opts.Meta.Image(), r.Topics)
	if len(known) == 0 {
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = unknown
		return done(resp)
	}
	p, ok := h.groups.partitionFor(r.Group)
	if !ok {
		return done(group.ErrorResponse(req.Body, kerr.NotCoordinator.Code))
	}
	fwd := *r
	fwd.Topics = known
	ch := h.groups.submit(req, p, &fwd)
	timeout := h.opts.Config.OffsetsCommitTimeout
	return Reply{Wait: func() kmsg.Response {
		resp := awaitCommit(ctx, ch, &fwd, timeout).(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = mergeByTopic(resp.Topics, unknown,
			func(t *kmsg.TxnOffsetCommitResponseTopic) string { return t.Topic },
			func(t *kmsg.TxnOffsetCommitResponseTopic) *[]kmsg.TxnOffsetCommitResponseTopicPartition {
				return &t.Partitions
			})
		return resp
	}}
}

// splitTxnCommitTopics separates the partitions of existing topics from
// those to answer UNKNOWN_TOPIC_OR_PARTITION.
func splitTxnCommitTopics(img *metadata.Image, topics []kmsg.TxnOffsetCommitRequestTopic) ([]kmsg.TxnOffsetCommitRequestTopic, []kmsg.TxnOffsetCommitResponseTopic) {
	var known []kmsg.TxnOffsetCommitRequestTopic
	var unknown []kmsg.TxnOffsetCommitResponseTopic
	for _, rt := range topics {
		keep := rt
		keep.Partitions = nil
		missing := kmsg.NewTxnOffsetCommitResponseTopic()
		missing.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			if partitionExists(img, rt.Topic, rp.Partition) {
				keep.Partitions = append(keep.Partitions, rp)
				continue
			}
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, kerr.UnknownTopicOrPartition.Code
			missing.Partitions = append(missing.Partitions, sp)
		}
		if len(keep.Partitions) > 0 {
			known = append(known, keep)
		}
		if len(missing.Partitions) > 0 {
			unknown = append(unknown, missing)
		}
	}
	return known, unknown
}
