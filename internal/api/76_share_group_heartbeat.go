package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// ShareGroupHeartbeat (KIP-932): a member of a share group joins,
// heartbeats or leaves, and learns the partitions it reads from. Version
// 1 (version 0 was Kafka 4.0's early access, which Kafka 4.1 removed). The
// group's __consumer_offsets partition serves it. As Kafka: the group
// needs READ (GROUP_AUTHORIZATION_FAILED), each subscribed topic DESCRIBE
// (TOPIC_AUTHORIZATION_FAILED).
func init() { register(76, 1, groupMax(76), (*Handler).handleShareGroupHeartbeat) }

func (h *Handler) handleShareGroupHeartbeat(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ShareGroupHeartbeatRequest)
	if !shareGroupsOn(h.opts.Meta.Image()) {
		return done(group.ErrorResponse(r, kerr.UnsupportedVersion.Code))
	}
	if !h.allowedGroup(req, acl.OpRead, r.GroupID) {
		return done(group.ErrorResponse(r, groupDenied))
	}
	for _, t := range r.SubscribedTopicNames {
		if !h.allowedTopic(req, acl.OpDescribe, t) {
			return done(group.ErrorResponse(r, kerr.TopicAuthorizationFailed.Code))
		}
	}
	return h.groups.reply(ctx, req, r.GroupID)
}
