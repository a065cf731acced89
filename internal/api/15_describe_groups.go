package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/group"
)

// DescribeGroups: versions as the coordinator implements them. The groups
// are split by coordinator partition and the answers merged in request
// order.
func init() { register(15, 0, groupMax(15), (*Handler).handleDescribeGroups) }

func (h *Handler) handleDescribeGroups(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	byPart, ok := h.groups.split(r.Groups)
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
		for _, sub := range wait(ctx) {
			answers = append(answers, sub.(*kmsg.DescribeGroupsResponse).Groups...)
		}
		resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
		resp.Groups = inRequestOrder(r.Groups, answers, func(g kmsg.DescribeGroupsResponseGroup) string { return g.Group })
		return resp
	}}
}
