package sharestate

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// refusal is why one partition of a request is refused: a Kafka error and
// the message that goes with it. A nil *refusal is success.
type refusal struct {
	err     *kerr.Error
	message string
}

// refuse refuses with Kafka's message for err (Errors.message()).
func refuse(err *kerr.Error) *refusal { return &refusal{err: err, message: err.Description} }

func refuseWith(err *kerr.Error, message string) *refusal {
	return &refusal{err: err, message: message}
}

func (r *refusal) code() int16 {
	if r == nil {
		return 0
	}
	return r.err.Code
}

// text is the ErrorMessage of a response: null on success.
func (r *refusal) text() *string {
	if r == nil {
		return nil
	}
	m := r.message
	return &m
}

// checkKey refuses what no share-partition can be named by. Kafka answers
// a request with an empty group id with an empty response; here each of
// its partitions is refused instead, so that the api layer, which routes
// partition by partition, gets an answer for every one.
func checkKey(k partitionKey) *refusal {
	switch {
	case k.group == "":
		return refuseWith(kerr.InvalidRequest, "The group id must be specified and non-empty.")
	case len(k.group) > maxKeyStringBytes:
		return refuseWith(kerr.InvalidRequest, fmt.Sprintf("The group id is longer than %d bytes.", maxKeyStringBytes))
	case k.partition < 0:
		return refuseWith(kerr.InvalidRequest, "The partition id cannot be a negative number.")
	}
	return nil
}

// ErrorResponse is the response to req when the coordinator cannot serve
// it at all (not the coordinator, loading, the append failed): every
// partition of the request, in its order, with code and Kafka's message
// for it, and every other field at its default. Requests of other types
// than those in MaxVersions are a programmer error.
func ErrorResponse(req kmsg.Request, code int16) kmsg.Response {
	var message *string
	if err, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		m := err.Description // a copy: the response must not point into kerr
		message = &m
	}
	switch req := req.(type) {
	case *kmsg.InitializeShareGroupStateRequest:
		return initializeError(req, code, message)
	case *kmsg.ReadShareGroupStateRequest:
		return readError(req, code, message)
	case *kmsg.WriteShareGroupStateRequest:
		return writeError(req, code, message)
	case *kmsg.DeleteShareGroupStateRequest:
		return deleteError(req, code, message)
	case *kmsg.ReadShareGroupStateSummaryRequest:
		return summaryError(req, code, message)
	}
	panic(fmt.Sprintf("sharestate: ErrorResponse for unserved request %T", req))
}

func initializeError(req *kmsg.InitializeShareGroupStateRequest, code int16, message *string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, message
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func readError(req *kmsg.ReadShareGroupStateRequest, code int16, message *string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, message
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func writeError(req *kmsg.WriteShareGroupStateRequest, code int16, message *string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, message
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func deleteError(req *kmsg.DeleteShareGroupStateRequest, code int16, message *string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, message
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func summaryError(req *kmsg.ReadShareGroupStateSummaryRequest, code int16, message *string) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, message
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
