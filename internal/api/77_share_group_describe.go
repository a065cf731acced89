package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// ShareGroupDescribe (KIP-932): share groups with their members and
// assignments. Version 1. The groups are split by coordinator partition
// and the answers merged in request order. As Kafka: a group the
// principal may not DESCRIBE gets GROUP_AUTHORIZATION_FAILED, and one
// whose members are assigned a topic it may not DESCRIBE gets
// TOPIC_AUTHORIZATION_FAILED, without its members.
func init() { register(77, 1, groupMax(77), (*Handler).handleShareGroupDescribe) }

func (h *Handler) handleShareGroupDescribe(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ShareGroupDescribeRequest)
	if !shareGroupsOn(h.opts.Meta.Image()) {
		return done(group.ErrorResponse(r, kerr.UnsupportedVersion.Code))
	}
	allowed, denied := partitionKeys(r.GroupIDs, func(g string) bool { return h.allowedGroup(req, acl.OpDescribe, g) })
	byPart, ok := h.groups.split(allowed)
	if !ok {
		return done(group.ErrorResponse(r, kerr.NotCoordinator.Code))
	}
	wait := h.groups.fanOut(req, byPart, func(ids []string) kmsg.Request {
		sub := kmsg.NewPtrShareGroupDescribeRequest()
		sub.GroupIDs, sub.IncludeAuthorizedOperations = ids, r.IncludeAuthorizedOperations
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		var answers []kmsg.ShareGroupDescribeResponseGroup
		for _, id := range denied {
			g := kmsg.NewShareGroupDescribeResponseGroup()
			g.GroupID, g.ErrorCode = id, groupDenied
			answers = append(answers, g)
		}
		for _, sub := range wait(ctx) {
			for _, g := range sub.(*kmsg.ShareGroupDescribeResponse).Groups {
				answers = append(answers, h.describedShareGroupFor(req, r, g))
			}
		}
		resp := r.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
		resp.Groups = inRequestOrder(r.GroupIDs, answers, func(g kmsg.ShareGroupDescribeResponseGroup) string { return g.GroupID })
		return resp
	}}
}

// describedShareGroupFor is g as req's principal may see it.
func (h *Handler) describedShareGroupFor(req *Request, r *kmsg.ShareGroupDescribeRequest, g kmsg.ShareGroupDescribeResponseGroup) kmsg.ShareGroupDescribeResponseGroup {
	if g.ErrorCode != 0 {
		return g
	}
	for _, m := range g.Members {
		for _, tp := range m.Assignment.TopicPartitions {
			if !h.allowedTopic(req, acl.OpDescribe, tp.Topic) {
				denied := kmsg.NewShareGroupDescribeResponseGroup()
				denied.GroupID, denied.ErrorCode = g.GroupID, kerr.TopicAuthorizationFailed.Code
				denied.ErrorMessage = kmsg.StringPtr("The group has described topic(s) that the client is not authorized to describe.")
				return denied
			}
		}
	}
	if r.IncludeAuthorizedOperations {
		g.AuthorizedOperations = h.authorizedOps(req, acl.ResourceGroup, g.GroupID)
	}
	return g
}
