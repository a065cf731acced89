package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
)

// AddPartitionsToTxn: v0-3, a producer adding partitions to its
// transaction (v4+ are the broker-to-broker batched form of KIP-890, not
// served). As in Kafka, when a partition does not exist (or is an internal
// topic's) nothing is added: those partitions get their error and the
// others OPERATION_NOT_ATTEMPTED.
func init() { register(24, 0, txnMax(24), (*Handler).handleAddPartitionsToTxn) }

func (h *Handler) handleAddPartitionsToTxn(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AddPartitionsToTxnRequest)
	if refused, ok := refuseTxnPartitions(h.opts.Meta.Image(), r.Topics); !ok {
		resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		resp.Topics = refused
		return done(resp)
	}
	return h.txns.reply(ctx, req, r.TransactionalID)
}

// refuseTxnPartitions answers every partition when one cannot be added:
// ok is false then.
func refuseTxnPartitions(img *metadata.Image, topics []kmsg.AddPartitionsToTxnRequestTopic) ([]kmsg.AddPartitionsToTxnResponseTopic, bool) {
	codeOf := func(topic string, p int32) int16 {
		t := img.Topics[topic]
		switch {
		case t == nil || p < 0 || int(p) >= len(t.Partitions):
			return kerr.UnknownTopicOrPartition.Code
		case isInternalTopic(topic):
			return kerr.InvalidTopicException.Code
		}
		return 0
	}
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
