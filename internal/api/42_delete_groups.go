package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// DeleteGroups: versions as the coordinator implements them. Only empty
// groups are deleted (NON_EMPTY_GROUP otherwise), with their offsets. The
// groups are split by coordinator partition and the answers merged in
// request order. A group the principal may not DELETE gets
// GROUP_AUTHORIZATION_FAILED.
func init() { register(42, 0, groupMax(42), (*Handler).handleDeleteGroups) }

func (h *Handler) handleDeleteGroups(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	allowed, denied := partitionKeys(r.Groups, func(g string) bool { return h.allowedGroup(req, acl.OpDelete, g) })
	byPart, ok := h.groups.split(allowed)
	if !ok {
		return done(group.ErrorResponse(r, kerr.NotCoordinator.Code))
	}
	wait := h.groups.fanOut(req, byPart, func(ids []string) kmsg.Request {
		sub := kmsg.NewPtrDeleteGroupsRequest()
		sub.Groups = ids
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		var answers []kmsg.DeleteGroupsResponseGroup
		for _, id := range denied {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group, g.ErrorCode = id, groupDenied
			answers = append(answers, g)
		}
		for _, sub := range wait(ctx) {
			answers = append(answers, sub.(*kmsg.DeleteGroupsResponse).Groups...)
		}
		resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
		resp.Groups = inRequestOrder(r.Groups, answers, func(g kmsg.DeleteGroupsResponseGroup) string { return g.Group })
		return resp
	}}
}
