package txn

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
)

// fencedFor is the code a client of version v understands: PRODUCER_FENCED
// exists from fencedSince on, before it Kafka answers INVALID_PRODUCER_EPOCH
// (KafkaApis does the same mapping for each of these requests).
func fencedFor(code, v, fencedSince int16) int16 {
	if code == kerr.ProducerFenced.Code && v < fencedSince {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// ErrorResponse is the response to req when the coordinator cannot serve it
// at all (loading, not the coordinator, the append failed): code in every
// error field the response has. Requests of other types than those in
// MaxVersions are a programmer error.
func ErrorResponse(req kmsg.Request, code int16) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.InitProducerIDRequest:
		return initError(req, code)
	case *kmsg.AddPartitionsToTxnRequest:
		return addPartitionsResponse(req, func(base.TopicPartition) int16 { return code })
	case *kmsg.AddOffsetsToTxnRequest:
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.EndTxnRequest:
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.DescribeTransactionsRequest:
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range req.TransactionalIDs {
			s := kmsg.NewDescribeTransactionsResponseTransactionState()
			s.TransactionalID, s.ErrorCode = id, code
			resp.TransactionStates = append(resp.TransactionStates, s)
		}
		return resp
	case *kmsg.ListTransactionsRequest:
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.ErrorCode = code
		return resp
	}
	panic(fmt.Sprintf("txn: ErrorResponse for unserved request %T", req))
}

// AddPartitionsNotAttempted is the AddPartitionsToTxn (v0-v3) response
// when the api layer refuses some partitions before the coordinator sees
// the request (unknown topic, not authorized): failed gives their codes,
// and every other partition gets OPERATION_NOT_ATTEMPTED, as in Kafka.
func AddPartitionsNotAttempted(req *kmsg.AddPartitionsToTxnRequest, failed map[base.TopicPartition]int16) *kmsg.AddPartitionsToTxnResponse {
	return addPartitionsResponse(req, func(tp base.TopicPartition) int16 {
		if code, ok := failed[tp]; ok {
			return code
		}
		return kerr.OperationNotAttempted.Code
	})
}

func initError(req *kmsg.InitProducerIDRequest, code int16) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ErrorCode = code
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	return resp
}

// addPartitionsResponse answers every partition of a v0-v3 request, once
// each, grouped by topic in the order of the request. (A v4+ request is not
// served; it gets codeOf's answer as its top-level error.)
func addPartitionsResponse(req *kmsg.AddPartitionsToTxnRequest, codeOf func(base.TopicPartition) int16) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version >= 4 {
		resp.ErrorCode = codeOf(base.TopicPartition{})
		return resp
	}
	topicIndex := map[string]int{}
	seen := map[base.TopicPartition]bool{}
	for _, t := range req.Topics {
		i, ok := topicIndex[t.Topic]
		if !ok {
			i = len(resp.Topics)
			topicIndex[t.Topic] = i
			resp.Topics = append(resp.Topics, kmsg.AddPartitionsToTxnResponseTopic{Topic: t.Topic})
		}
		for _, p := range t.Partitions {
			tp := base.TopicPartition{Topic: t.Topic, Partition: p}
			if seen[tp] {
				continue
			}
			seen[tp] = true
			rt := &resp.Topics[i]
			rt.Partitions = append(rt.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: p, ErrorCode: codeOf(tp)})
		}
	}
	return resp
}
