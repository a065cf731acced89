package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// ConsumerGroupDescribe (KIP-848): consumer-protocol groups with their
// members, assignments and epochs. Versions 0-1 (v1: each member's type,
// KIP-1099). The groups are split by coordinator partition and the answers
// merged in request order. As Kafka: a group the principal may not
// DESCRIBE gets GROUP_AUTHORIZATION_FAILED, and one whose members use a
// topic it may not DESCRIBE gets TOPIC_AUTHORIZATION_FAILED, without its
// members.
func init() { register(69, 0, groupMax(69), (*Handler).handleConsumerGroupDescribe) }

func (h *Handler) handleConsumerGroupDescribe(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ConsumerGroupDescribeRequest)
	allowed, denied := partitionKeys(r.Groups, func(g string) bool { return h.allowedGroup(req, acl.OpDescribe, g) })
	byPart, ok := h.groups.split(allowed)
	if !ok {
		return done(group.ErrorResponse(r, kerr.NotCoordinator.Code))
	}
	wait := h.groups.fanOut(req, byPart, func(ids []string) kmsg.Request {
		sub := kmsg.NewPtrConsumerGroupDescribeRequest()
		sub.Groups, sub.IncludeAuthorizedOperations = ids, r.IncludeAuthorizedOperations
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		var answers []kmsg.ConsumerGroupDescribeResponseGroup
		for _, id := range denied {
			g := kmsg.NewConsumerGroupDescribeResponseGroup()
			g.Group, g.ErrorCode = id, groupDenied
			answers = append(answers, g)
		}
		for _, sub := range wait(ctx) {
			for _, g := range sub.(*kmsg.ConsumerGroupDescribeResponse).Groups {
				answers = append(answers, h.describedGroupFor(req, r, g))
			}
		}
		resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		resp.Groups = inRequestOrder(r.Groups, answers, func(g kmsg.ConsumerGroupDescribeResponseGroup) string { return g.Group })
		return resp
	}}
}

// describedGroupFor is g as req's principal may see it.
func (h *Handler) describedGroupFor(req *Request, r *kmsg.ConsumerGroupDescribeRequest, g kmsg.ConsumerGroupDescribeResponseGroup) kmsg.ConsumerGroupDescribeResponseGroup {
	if g.ErrorCode != 0 {
		return g
	}
	for _, name := range describedTopics(g) {
		if !h.allowedTopic(req, acl.OpDescribe, name) {
			denied := kmsg.NewConsumerGroupDescribeResponseGroup()
			denied.Group, denied.ErrorCode = g.Group, kerr.TopicAuthorizationFailed.Code
			denied.ErrorMessage = kmsg.StringPtr("The described group uses topics that the client is not authorized to describe.")
			return denied
		}
	}
	if r.IncludeAuthorizedOperations {
		g.AuthorizedOperations = h.authorizedOps(req, acl.ResourceGroup, g.Group)
	}
	return g
}

// describedTopics is the topics a described group's members subscribe to
// by name or are assigned.
func describedTopics(g kmsg.ConsumerGroupDescribeResponseGroup) []string {
	var names []string
	for _, m := range g.Members {
		names = append(names, m.SubscribedTopics...)
		for _, a := range []kmsg.Assignment{m.Assignment, m.TargetAssignment} {
			for _, tp := range a.TopicPartitions {
				if tp.Topic != "" {
					names = append(names, tp.Topic)
				}
			}
		}
	}
	return names
}
