package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"

	"github.com/strata-broker/strata/internal/partition/producers"
)

// DescribeProducers: v0 (KIP-664). The active producers of each requested
// partition, as Kafka's UnifiedLog.activeProducers lists them, so that
// kafka-transactions.sh and admin clients can find hanging transactions.
// Partitions are answered in request order, each with its own error, as
// Kafka's handleDescribeProducersRequest: an invalid topic name is
// INVALID_TOPIC_EXCEPTION, a topic or partition that does not exist
// UNKNOWN_TOPIC_OR_PARTITION. On one broker every partition is led here,
// so NOT_LEADER_OR_FOLLOWER does not arise. Needs READ on the topic.
func init() { register(61, 0, 0, (*Handler).handleDescribeProducers) }

func (h *Handler) handleDescribeProducers(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeProducersRequest)
	resp := r.ResponseKind().(*kmsg.DescribeProducersResponse)
	img := h.opts.Meta.Image()
	for _, rt := range r.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		t := img.Topics[rt.Topic]
		topicCode, topicMsg := describeProducersTopicError(rt.Topic, t != nil)
		if topicCode == 0 && !h.allowedTopic(req, acl.OpRead, rt.Topic) {
			topicCode, topicMsg = topicDenied, nil
		}
		for _, idx := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = idx
			if topicCode != 0 {
				sp.ErrorCode, sp.ErrorMessage = topicCode, topicMsg
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p, code := h.fetchPartition(t, idx, false)
			if code != 0 {
				sp.ErrorCode = code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			sp.ActiveProducers = activeProducers(p.Producers())
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return done(resp)
}

// describeProducersTopicError is the error every partition of the named
// topic gets before its partitions are looked at, as Kafka decides it per
// topic (with the message Kafka sends); 0 when the topic exists.
func describeProducersTopicError(name string, exists bool) (int16, *string) {
	if err := validateTopicName(name); err != nil {
		return kerr.InvalidTopicException.Code, strPtr(err.Error())
	}
	if !exists {
		return kerr.UnknownTopicOrPartition.Code, strPtr(kerr.UnknownTopicOrPartition.Description)
	}
	return 0, nil
}

// activeProducers puts a partition's producer state on the wire, in the
// order given (by producer id).
func activeProducers(entries []producers.Entry) []kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	out := make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(entries))
	for _, e := range entries {
		out = append(out, activeProducer(e))
	}
	return out
}

// activeProducer is one producer's state with Kafka's sentinels for what
// it lacks: last sequence -1 without a batch in its epoch (after a marker
// that bumped the epoch, or for a coordinator's producer), transaction
// start -1 with no open transaction.
// The coordinator epoch is that of the producer's last marker, -1 before
// any, as in Kafka.
func activeProducer(e producers.Entry) kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer() // -1 defaults
	ap.ProducerID = int64(e.ProducerID)
	ap.ProducerEpoch = int32(e.Epoch)
	if n := len(e.Batches); n > 0 {
		ap.LastSequence = e.Batches[n-1].LastSeq
	}
	ap.LastTimestamp = e.LastTimestampMs
	ap.CoordinatorEpoch = e.CoordinatorEpoch
	if first, open := e.CurrentTxnFirstOffset.Get(); open {
		ap.CurrentTxnStartOffset = int64(first)
	}
	return ap
}
