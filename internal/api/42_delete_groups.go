package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/group"
)

// DeleteGroups: versions as the coordinator implements them. Only empty
// groups are deleted (NON_EMPTY_GROUP otherwise), with their offsets. The
// groups are split by coordinator partition and the answers merged in
// request order.
func init() { register(42, 0, groupMax(42), (*Handler).handleDeleteGroups) }

func (h *Handler) handleDeleteGroups(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteGroupsRequest)
	byPart, ok := h.splitGroups(r.Groups)
	if !ok {
		return done(group.ErrorResponse(r, kerr.NotCoordinator.Code))
	}
	wait := h.fanOut(req, byPart, func(ids []string) kmsg.Request {
		sub := kmsg.NewPtrDeleteGroupsRequest()
		sub.Groups = ids
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		byID := map[string]kmsg.DeleteGroupsResponseGroup{}
		for _, sub := range wait(ctx) {
			for _, g := range sub.(*kmsg.DeleteGroupsResponse).Groups {
				byID[g.Group] = g
			}
		}
		resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, id := range r.Groups {
			g, ok := byID[id]
			if !ok {
				panic("api: the coordinator did not answer for group " + id)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}}
}
