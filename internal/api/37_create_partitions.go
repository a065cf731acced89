package api

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// CreatePartitions: v0-3. The count only grows; validate_only checks and
// changes nothing. __consumer_offsets keeps its count (INVALID_REQUEST), and
// a topic named twice in one request changes in neither (INVALID_REQUEST,
// before authorization, as Kafka's controller answers).
// Needs ALTER on the topic. A client's controller_mutation_rate counts the
// partitions added (strict from v3; mutation_quota.go).
func init() { register(37, 0, 3, (*Handler).handleCreatePartitions) }

func (h *Handler) handleCreatePartitions(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.CreatePartitionsRequest)
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	names := make([]string, len(r.Topics))
	for i, rt := range r.Topics {
		names[i] = rt.Topic
	}
	twice := repeated(names)
	q := h.newMutationQuota(req, 3)
	for i, rt := range r.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		code, msg := topicDenied, "not authorized to alter topic "+rt.Topic
		switch {
		case twice[i]:
			code, msg = kerr.InvalidRequest.Code, "topic "+rt.Topic+" appears more than once in the request"
		case h.allowedTopic(req, acl.OpAlter, rt.Topic):
			code, msg = h.createPartitions(ctx, rt, r.ValidateOnly, q)
		}
		st.ErrorCode, st.ErrorMessage = code, strPtr(msg)
		resp.Topics = append(resp.Topics, st)
	}
	resp.ThrottleMillis = q.throttleMillis()
	return done(resp)
}

func (h *Handler) createPartitions(ctx context.Context, rt kmsg.CreatePartitionsRequestTopic, validateOnly bool, q *mutationQuota) (int16, string) {
	t, ok := h.opts.Meta.Image().Topics[rt.Topic]
	if !ok {
		return kerr.UnknownTopicOrPartition.Code, "topic " + rt.Topic + " does not exist"
	}
	if isInternalTopic(t.Name) {
		// Groups are mapped to partitions by count: more partitions
		// would move groups away from their committed state.
		return kerr.InvalidRequest.Code, "the partition count of internal topic " + t.Name + " cannot change; set offsets.topic.num.partitions or transaction.state.log.num.partitions before its first use"
	}
	have := int32(len(t.Partitions))
	if rt.Count <= have {
		return kerr.InvalidPartitions.Code, fmt.Sprintf("topic %s has %d partitions; the new count must be larger, got %d", rt.Topic, have, rt.Count)
	}
	var assignments [][]int32
	if rt.Assignment != nil {
		if int32(len(rt.Assignment)) != rt.Count-have {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("%d assignments given for %d new partitions", len(rt.Assignment), rt.Count-have)
		}
		img := h.opts.Meta.Image()
		rf := len(t.Partitions[0].TargetReplicas())
		for i, a := range rt.Assignment {
			if len(img.Brokers) == 0 {
				if len(a.Replicas) != 1 || a.Replicas[0] != h.opts.Broker.NodeID() {
					return kerr.InvalidReplicaAssignment.Code, "every partition must be assigned to exactly this broker in a one-broker cluster"
				}
			} else if code, msg := checkReplicaList(img, have+int32(i), a.Replicas, rf); code != 0 {
				return code, msg
			}
			assignments = append(assignments, slices.Clone(a.Replicas))
		}
	}
	if validateOnly {
		return 0, ""
	}
	if code, msg := q.take(rt.Count - have); code != 0 {
		return code, msg
	}
	if err := h.opts.Meta.CreatePartitions(ctx, rt.Topic, rt.Count, assignments); err != nil {
		return errorCode(err)
	}
	return 0, ""
}
