package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
)

// ListPartitionReassignments: v0 (KIP-455). Needs DESCRIBE on the
// cluster. Lists the reassignments in flight of the partitions asked for
// (topics null: of every partition), from this broker's metadata image;
// partitions that do not exist or have none in flight are left out, as in
// Kafka.
func init() { register(46, 0, 0, (*Handler).handleListPartitionReassignments) }

func (h *Handler) handleListPartitionReassignments(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ListPartitionReassignmentsRequest)
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if !h.allowedCluster(req, acl.OpDescribe) {
		resp.ErrorCode = clusterDenied
		resp.ErrorMessage = strPtr("not authorized to describe the cluster (list partition reassignments)")
		return done(resp)
	}
	var parts []base.TopicPartition
	if r.Topics != nil {
		parts = []base.TopicPartition{}
		for _, rt := range r.Topics {
			for _, p := range rt.Partitions {
				parts = append(parts, base.TopicPartition{Topic: rt.Topic, Partition: p})
			}
		}
	}
	for _, st := range h.opts.Meta.ListPartitionReassignments(parts) {
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != st.TP.Topic {
			t := kmsg.NewListPartitionReassignmentsResponseTopic()
			t.Topic = st.TP.Topic
			resp.Topics = append(resp.Topics, t)
		}
		p := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		p.Partition, p.Replicas = st.TP.Partition, st.Replicas
		p.AddingReplicas, p.RemovingReplicas = st.Adding, st.Removing
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return done(resp)
}
