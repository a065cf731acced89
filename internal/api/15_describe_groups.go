package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// DescribeGroups: versions as the coordinator implements them. The groups
// are split by coordinator partition and the answers merged in request
// order. A group the principal may not DESCRIBE gets
// GROUP_AUTHORIZATION_FAILED; v3+ may ask for each group's authorized
// operations.
func init() { register(15, 0, groupMax(15), (*Handler).handleDescribeGroups) }

func (h *Handler) handleDescribeGroups(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	allowed, denied := partitionKeys(r.Groups, func(g string) bool { return h.allowedGroup(req, acl.OpDescribe, g) })
	byPart, ok := h.groups.split(allowed)
	if !ok {
		return done(group.ErrorResponse(r, kerr.NotCoordinator.Code))
	}
	wait := h.groups.fanOut(req, byPart, func(ids []string) kmsg.Request {
		sub := kmsg.NewPtrDescribeGroupsRequest()
		sub.Groups, sub.IncludeAuthorizedOperations = ids, r.IncludeAuthorizedOperations
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		var answers []kmsg.DescribeGroupsResponseGroup
		for _, id := range denied {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.ErrorCode = id, groupDenied
			answers = append(answers, g)
		}
		for _, sub := range wait(ctx) {
			for _, g := range sub.(*kmsg.DescribeGroupsResponse).Groups {
				if r.IncludeAuthorizedOperations && g.ErrorCode == 0 {
					g.AuthorizedOperations = h.authorizedOps(req, acl.ResourceGroup, g.Group)
				}
				answers = append(answers, g)
			}
		}
		resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
		resp.Groups = inRequestOrder(r.Groups, answers, func(g kmsg.DescribeGroupsResponseGroup) string { return g.Group })
		return resp
	}}
}
