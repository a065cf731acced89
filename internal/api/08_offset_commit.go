package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// OffsetCommit: commits offsets for a group (members with their generation,
// or simple commits with generation -1). Versions: what the coordinator
// implements (group.MaxVersions), and v10, which names topics by id
// (offsets_by_id.go); the group's __consumer_offsets partition serves it.
// As in Kafka, partitions of topics that do not exist get
// UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for an unknown id), and a
// commit not durable within offsets.commit.timeout.ms gets
// REQUEST_TIMED_OUT (it may still land).
func init() { register(8, 0, topicIDsVersion, (*Handler).handleOffsetCommit) }

func (h *Handler) handleOffsetCommit(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.OffsetCommitRequest)
	if code := h.commitDenial(req, r); code != 0 {
		return done(group.ErrorResponse(req.Body, code))
	}
	img := h.opts.Meta.Image()
	topics, ids := r.Topics, topicIDs{}
	var unresolved []kmsg.OffsetCommitResponseTopic
	if r.Version >= topicIDsVersion {
		topics, unresolved = resolveCommitTopics(img, r.Topics, ids)
	}
	// answer is the response with the refused partitions merged in and,
	// for v10, the topics named by id.
	answer := func(resp *kmsg.OffsetCommitResponse, refused []kmsg.OffsetCommitResponseTopic) *kmsg.OffsetCommitResponse {
		resp.Topics = mergeByTopic(resp.Topics, refused,
			func(t *kmsg.OffsetCommitResponseTopic) string { return t.Topic },
			func(t *kmsg.OffsetCommitResponseTopic) *[]kmsg.OffsetCommitResponseTopicPartition {
				return &t.Partitions
			})
		if r.Version >= topicIDsVersion {
			commitTopicsByID(img, resp.Topics, ids)
			resp.Topics = append(resp.Topics, unresolved...)
		}
		return resp
	}
	known, unknown := splitCommitTopics(topics, h.commitRefusal(req, img))
	if len(known) == 0 {
		return done(answer(r.ResponseKind().(*kmsg.OffsetCommitResponse), unknown))
	}
	p, ok := h.groups.partitionFor(r.Group)
	if !ok {
		return done(group.ErrorResponse(req.Body, kerr.NotCoordinator.Code))
	}
	fwd := *r
	fwd.Topics = known
	if r.Version >= topicIDsVersion {
		fwd.SetVersion(beforeTopicIDsVersion)
	}
	ch := h.groups.submit(req, p, &fwd)
	timeout := h.opts.Config.OffsetsCommitTimeout
	return Reply{Wait: func() kmsg.Response {
		return answer(awaitCommit(ctx, ch, &fwd, timeout).(*kmsg.OffsetCommitResponse), unknown)
	}}
}

// splitCommitTopics separates the partitions to commit from those refusal
// refuses, answered with its code.
func splitCommitTopics(topics []kmsg.OffsetCommitRequestTopic, refusal func(topic string, p int32) int16) ([]kmsg.OffsetCommitRequestTopic, []kmsg.OffsetCommitResponseTopic) {
	var known []kmsg.OffsetCommitRequestTopic
	var unknown []kmsg.OffsetCommitResponseTopic
	for _, rt := range topics {
		keep := rt
		keep.Partitions = nil
		var missing kmsg.OffsetCommitResponseTopic
		for _, rp := range rt.Partitions {
			code := refusal(rt.Topic, rp.Partition)
			if code == 0 {
				keep.Partitions = append(keep.Partitions, rp)
				continue
			}
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			missing.Partitions = append(missing.Partitions, sp)
		}
		if len(keep.Partitions) > 0 {
			known = append(known, keep)
		}
		if len(missing.Partitions) > 0 {
			missing.Topic = rt.Topic
			unknown = append(unknown, missing)
		}
	}
	return known, unknown
}

// awaitCommit is coordinators.await bounded by offsets.commit.timeout.ms.
func awaitCommit(ctx context.Context, ch <-chan kmsg.Response, body kmsg.Request, timeout time.Duration) kmsg.Response {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r
	case <-t.C:
		return group.ErrorResponse(body, kerr.RequestTimedOut.Code)
	case <-ctx.Done():
		return group.ErrorResponse(body, kerr.CoordinatorNotAvailable.Code)
	}
}

// commitDenial is GROUP_AUTHORIZATION_FAILED when req's principal may not
// READ the group, else 0.
func (h *Handler) commitDenial(req *Request, r *kmsg.OffsetCommitRequest) int16 {
	if !h.allowedGroup(req, acl.OpRead, r.Group) {
		return groupDenied
	}
	return 0
}
