package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// AlterPartitionReassignments: v0-1 (KIP-455; v1 adds
// AllowReplicationFactorChange, KIP-860). Needs ALTER on the cluster.
// Each partition's replicas move to the list given, through the
// controller: the new replicas join, catch up and enter the ISR, then the
// ones left out go (metadata.AlterPartitionReassignments). Replicas null
// cancels the reassignment in flight. Internal topics may be reassigned,
// as in Kafka. On a single node (no broker registered) the only valid
// target is this broker.
func init() { register(45, 0, 1, (*Handler).handleAlterPartitionReassignments) }

func (h *Handler) handleAlterPartitionReassignments(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = r.AllowReplicationFactorChange
	var asked []metadata.Reassignment
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			asked = append(asked, metadata.Reassignment{TP: base.TopicPartition{Topic: rt.Topic, Partition: rp.Partition},
				Replicas: rp.Replicas, KeepReplicationFactor: !r.AllowReplicationFactorChange})
		}
	}
	answers := make([]electionAnswer, len(asked))
	switch {
	case !h.allowedCluster(req, acl.OpAlter):
		resp.ErrorCode = clusterDenied
		resp.ErrorMessage = strPtr("not authorized to alter the cluster (reassign partitions)")
		for i := range answers {
			answers[i] = electionAnswer{code: clusterDenied}
		}
	default:
		if r.TimeoutMillis > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(r.TimeoutMillis)*time.Millisecond)
			defer cancel()
		}
		h.reassign(ctx, asked, answers)
	}
	i := 0
	for _, rt := range r.Topics {
		t := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			p.Partition, p.ErrorCode, p.ErrorMessage = rp.Partition, answers[i].code, strPtr(answers[i].msg)
			t.Partitions = append(t.Partitions, p)
			i++
		}
		resp.Topics = append(resp.Topics, t)
	}
	return done(resp)
}

// reassign answers asked into answers (of the same length): those a
// single node refuses here, the rest from the controller.
func (h *Handler) reassign(ctx context.Context, asked []metadata.Reassignment, answers []electionAnswer) {
	var (
		sent    []metadata.Reassignment
		sentIdx []int
	)
	single := len(h.opts.Meta.Image().Brokers) == 0
	for i, a := range asked {
		if self := h.opts.Broker.NodeID(); single && a.Replicas != nil && (len(a.Replicas) != 1 || a.Replicas[0] != self) {
			answers[i] = electionAnswer{kerr.InvalidReplicaAssignment.Code,
				fmt.Sprintf("%s: a one-broker cluster can only place replicas on this broker: replicas [%d], not %v", a.TP, self, a.Replicas)}
			continue
		}
		sent = append(sent, a)
		sentIdx = append(sentIdx, i)
	}
	for j, err := range h.opts.Meta.AlterPartitionReassignments(ctx, sent) {
		code, msg := reassignErrorCode(err)
		answers[sentIdx[j]] = electionAnswer{code, msg}
	}
}

// reassignErrorCode maps AlterPartitionReassignments' answer for one
// partition. Only this API meets these metadata errors, so they are
// mapped here rather than in errorCode.
func reassignErrorCode(err error) (int16, string) {
	switch {
	case errors.Is(err, metadata.ErrInvalidReplicaAssignment):
		return kerr.InvalidReplicaAssignment.Code, err.Error()
	case errors.Is(err, metadata.ErrInvalidReplicationFactor):
		return kerr.InvalidReplicationFactor.Code, err.Error()
	case errors.Is(err, metadata.ErrNoReassignmentInProgress):
		return kerr.NoReassignmentInProgress.Code, err.Error()
	}
	return controllerAnswerCode(err)
}
