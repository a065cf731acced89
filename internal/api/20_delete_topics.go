package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
)

// DeleteTopics: v0-6 (v6 may name topics by id). The partitions' data is
// removed when the broker reconciles with the new image. __consumer_offsets
// cannot be deleted (INVALID_REQUEST). An entry with both a name and an
// id or neither, and a topic named twice (two names, two ids, or its name
// and its id) are INVALID_REQUEST too, as in Kafka, and nothing of them is
// deleted (delete_topics_targets.go). Deleting needs DELETE on the topic.
// A client's controller_mutation_rate counts the partitions deleted
// (strict from v5; mutation_quota.go).
func init() { register(20, 0, 6, (*Handler).handleDeleteTopics) }

func (h *Handler) handleDeleteTopics(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteTopicsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	var targets []deleteTarget
	if req.Version >= 6 {
		for _, t := range r.Topics {
			targets = append(targets, deleteTarget{t.Topic, t.TopicID})
		}
	} else {
		for _, name := range r.TopicNames {
			targets = append(targets, deleteTarget{name: &name})
		}
	}
	img := h.opts.Meta.Image()
	refusals := deleteTargetRefusals(targets, func(name string) ([16]byte, bool) {
		t, ok := img.Topics[name]
		if !ok || !h.allowedTopic(req, acl.OpDelete, name) {
			return [16]byte{}, false
		}
		return t.ID, true
	})
	q := h.newMutationQuota(req, 5)
	for i, tg := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = tg.name, tg.id
		code, msg := deletionDisabled(req.Version)
		switch {
		case !h.opts.Config.DeleteTopicEnable:
		case refusals[i] != "":
			code, msg = kerr.InvalidRequest.Code, refusals[i]
		default:
			code, msg = h.deleteOneTopic(ctx, req, tg.name, tg.id, q, &st)
		}
		st.ErrorCode = code
		if req.Version >= 5 {
			st.ErrorMessage = strPtr(msg)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if err := h.opts.Broker.Reconcile(); err != nil {
		h.logger.Error("removing deleted partitions", "err", err)
	}
	resp.ThrottleMillis = q.throttleMillis()
	return done(resp)
}

// deletionDisabled is Kafka's answer for every topic of a DeleteTopics
// while delete.topic.enable=false: TOPIC_DELETION_DISABLED from v3, which
// added it, INVALID_REQUEST before.
func deletionDisabled(version int16) (int16, string) {
	const msg = "topic deletion is disabled on this broker (delete.topic.enable=false)"
	if version >= 3 {
		return kerr.TopicDeletionDisabled.Code, msg
	}
	return kerr.InvalidRequest.Code, msg
}

func (h *Handler) deleteOneTopic(ctx context.Context, req *Request, name *string, id [16]byte, q *mutationQuota, st *kmsg.DeleteTopicsResponseTopic) (int16, string) {
	img := h.opts.Meta.Image()
	var topic string
	switch {
	case name != nil:
		if !h.allowedTopic(req, acl.OpDelete, *name) {
			return topicDenied, "not authorized to delete topic " + *name
		}
		t, ok := img.Topics[*name]
		if !ok {
			return kerr.UnknownTopicOrPartition.Code, "topic " + *name + " does not exist"
		}
		topic, st.TopicID = t.Name, t.ID
	default:
		t, ok := img.TopicsByID[base.TopicID(id)]
		if !ok {
			return kerr.UnknownTopicID.Code, "no topic has this id"
		}
		topic = t.Name
		if !h.allowedTopic(req, acl.OpDelete, topic) {
			return topicDenied, "not authorized to delete this topic"
		}
		st.Topic = &topic
	}
	if isInternalTopic(topic) {
		// Kafka refuses too: a coordinator's state lives there.
		return kerr.InvalidRequest.Code, "topic " + topic + " is internal and cannot be deleted"
	}
	if code, msg := q.take(int32(len(img.Topics[topic].Partitions))); code != 0 {
		return code, msg
	}
	if err := h.opts.Meta.DeleteTopic(ctx, topic); err != nil {
		return errorCode(err)
	}
	h.logger.Info("deleted topic", "topic", topic)
	return 0, ""
}
