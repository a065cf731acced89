package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// AddPartitionsToTxn: v0-3, a producer adding partitions to its
// transaction; v4, the batched form a partition leader sends to verify
// (KIP-890 part 1) or to add for a client of transaction version 2, see
// handleAddPartitionsToTxnBatch. As in Kafka, when a partition does not exist (or is an internal
// topic's) nothing is added: those partitions get their error and the
// others OPERATION_NOT_ATTEMPTED; so when the principal may not WRITE one
// of the topics (TOPIC_AUTHORIZATION_FAILED). Without WRITE on the
// transactional id every partition gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
func init() { register(24, 0, addPartitionsBatchVersion, (*Handler).handleAddPartitionsToTxn) }

func (h *Handler) handleAddPartitionsToTxn(ctx context.Context, req *Request) Reply {
	if req.Version >= addPartitionsBatchVersion {
		return h.handleAddPartitionsToTxnBatch(ctx, req)
	}
	r := req.Body.(*kmsg.AddPartitionsToTxnRequest)
	if !h.allowedTxn(req, acl.OpWrite, r.TransactionalID) {
		return h.txns.replyIf(ctx, req, r.TransactionalID, false, txnDenied)
	}
	denied := h.deniedTopics(req, acl.OpWrite, addPartitionsTopics(r))
	if refused, ok := refuseTxnPartitions(h.opts.Meta.Image(), r.Topics, denied); !ok {
		resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		resp.Topics = refused
		return done(resp)
	}
	return h.txns.reply(ctx, req, r.TransactionalID)
}

// refuseTxnPartitions answers every partition when one cannot be added
// (a topic in denied may not be written by the principal): ok is false
// then.
func refuseTxnPartitions(img *metadata.Image, topics []kmsg.AddPartitionsToTxnRequestTopic, denied map[string]bool) ([]kmsg.AddPartitionsToTxnResponseTopic, bool) {
	codeOf := func(topic string, p int32) int16 { return txnPartitionCode(img, denied, topic, p) }
	ok := true
	for _, rt := range topics {
		for _, p := range rt.Partitions {
			if codeOf(rt.Topic, p) != 0 {
				ok = false
			}
		}
	}
	if ok {
		return nil, true
	}
	out := make([]kmsg.AddPartitionsToTxnResponseTopic, 0, len(topics))
	for _, rt := range topics {
		st := kmsg.NewAddPartitionsToTxnResponseTopic()
		st.Topic = rt.Topic
		for _, p := range rt.Partitions {
			sp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			sp.Partition = p
			if sp.ErrorCode = codeOf(rt.Topic, p); sp.ErrorCode == 0 {
				sp.ErrorCode = kerr.OperationNotAttempted.Code
			}
			st.Partitions = append(st.Partitions, sp)
		}
		out = append(out, st)
	}
	return out, false
}

// txnPartitionCode is why partition p of topic cannot be in a
// transaction, 0 when it can: the principal may not write the topic (in
// denied), it does not exist, or it is an internal topic.
func txnPartitionCode(img *metadata.Image, denied map[string]bool, topic string, p int32) int16 {
	t := img.Topics[topic]
	switch {
	case denied[topic]:
		return topicDenied
	case t == nil || p < 0 || int(p) >= len(t.Partitions):
		return kerr.UnknownTopicOrPartition.Code
	case isInternalTopic(topic):
		return kerr.InvalidTopicException.Code
	}
	return 0
}

// addPartitionsTopics are the topics an AddPartitionsToTxn names.
func addPartitionsTopics(r *kmsg.AddPartitionsToTxnRequest) []string {
	out := make([]string, len(r.Topics))
	for i, t := range r.Topics {
		out[i] = t.Topic
	}
	return out
}
