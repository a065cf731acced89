package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// ConsumerGroupHeartbeat (KIP-848): a member of a consumer-protocol group
// joins, heartbeats or leaves, and learns its assignment. Versions 0-1 (v1:
// the client names itself). The group's __consumer_offsets partition
// serves it. As Kafka: the group needs READ (GROUP_AUTHORIZATION_FAILED),
// each subscribed topic name DESCRIBE (TOPIC_AUTHORIZATION_FAILED); a
// regular expression matches only the topics the member may DESCRIBE.
func init() { register(68, 0, groupMax(68), (*Handler).handleConsumerGroupHeartbeat) }

func (h *Handler) handleConsumerGroupHeartbeat(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ConsumerGroupHeartbeatRequest)
	if !h.allowedGroup(req, acl.OpRead, r.Group) {
		return done(group.ErrorResponse(r, groupDenied))
	}
	for _, t := range r.SubscribedTopicNames {
		if !h.allowedTopic(req, acl.OpDescribe, t) {
			resp := group.ErrorResponse(r, kerr.TopicAuthorizationFailed.Code).(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.ErrorMessage = kmsg.StringPtr("The group has subscribed to topics that are not authorized.")
			return done(resp)
		}
	}
	return h.groups.reply(ctx, req, r.Group)
}
