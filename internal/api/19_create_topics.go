package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// CreateTopics: v0-7. -1 partitions / replication factor (v4+) mean the
// broker defaults; validate_only (v1+) checks everything and creates
// nothing; v5+ answers with the topic's configs, v7+ with its id. Creating
// needs CREATE on the cluster or the topic; the configs in the answer need
// DESCRIBE_CONFIGS on the topic (TOPIC_AUTHORIZATION_FAILED in
// topic_config_error_code otherwise), as in Kafka. A client's
// controller_mutation_rate counts the partitions created (strict from v6:
// THROTTLING_QUOTA_EXCEEDED; mutation_quota.go).
func init() { register(19, 0, 7, (*Handler).handleCreateTopics) }

func (h *Handler) handleCreateTopics(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.CreateTopicsRequest)
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := make(map[string]int)
	for _, rt := range r.Topics {
		seen[rt.Topic]++
	}
	q := h.newMutationQuota(req, 6)
	for _, rt := range r.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		st.NumPartitions, st.ReplicationFactor = -1, -1
		code, msg := h.createOneTopic(ctx, req, r, rt, seen[rt.Topic] > 1, q, &st)
		st.ErrorCode = code
		if req.Version >= 1 {
			st.ErrorMessage = strPtr(msg)
		}
		resp.Topics = append(resp.Topics, st)
	}
	resp.ThrottleMillis = q.throttleMillis()
	return done(resp)
}

func (h *Handler) createOneTopic(ctx context.Context, req *Request, r *kmsg.CreateTopicsRequest, rt kmsg.CreateTopicsRequestTopic, duplicated bool, q *mutationQuota, st *kmsg.CreateTopicsResponseTopic) (int16, string) {
	if duplicated {
		return kerr.InvalidRequest.Code, "topic " + rt.Topic + " appears more than once in the request"
	}
	if !h.allowedCluster(req, acl.OpCreate) && !h.allowedTopic(req, acl.OpCreate, rt.Topic) {
		return topicDenied, "not authorized to create topic " + rt.Topic
	}
	spec := topicSpec{name: rt.Topic, partitions: rt.NumPartitions, replicationFactor: rt.ReplicationFactor, configs: map[string]string{}}
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return kerr.InvalidRequest.Code, "give either a replica assignment or partitions and replication factor, not both"
		}
		lists, code, msg := h.checkAssignment(rt.ReplicaAssignment)
		if code != 0 {
			return code, msg
		}
		spec.partitions = int32(len(lists))
		spec.replicationFactor = int16(len(lists[0]))
		spec.assignments = lists
	}
	for _, c := range rt.Configs {
		if c.Value == nil {
			continue // a null value means "use the default"
		}
		spec.configs[c.Name] = *c.Value
	}
	t, spec, err := h.createTopic(ctx, spec, r.ValidateOnly, q)
	if err != nil {
		return topicErrorCode(err)
	}
	st.NumPartitions, st.ReplicationFactor = spec.partitions, spec.replicationFactor
	if t != nil {
		st.TopicID = t.ID
	}
	if !h.allowedTopic(req, acl.OpDescribeConfigs, rt.Topic) {
		// Created, but its configs are not the principal's to see.
		st.ConfigErrorCode = topicDenied
		return 0, ""
	}
	for _, e := range h.describeTopicConfigs(h.opts.Meta.Image(), spec.configs) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.value(), e.ReadOnly, e.Source, e.Sensitive
		st.Configs = append(st.Configs, c)
	}
	return 0, ""
}
