package api

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// ListGroups: versions as the coordinator implements them (v4+ filter by
// state, v5+ by type). Every __consumer_offsets partition coordinated here
// is asked (clients ask every broker) and the answers are concatenated; the
// first error a partition reports (e.g. COORDINATOR_LOAD_IN_PROGRESS,
// retriable) is the response's error, as Kafka reports a loading partition. Without DESCRIBE on the cluster only
// the groups the principal may DESCRIBE are listed.
func init() { register(16, 0, groupMax(16), (*Handler).handleListGroups) }

func (h *Handler) handleListGroups(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ListGroupsRequest)
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	byPart, ok := h.groups.every()
	if !ok {
		return done(resp) // no group is coordinated here
	}
	wait := h.groups.fanOut(req, byPart, func([]string) kmsg.Request {
		sub := kmsg.NewPtrListGroupsRequest()
		sub.StatesFilter, sub.TypesFilter = r.StatesFilter, r.TypesFilter
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		for _, sub := range wait(ctx) {
			s := sub.(*kmsg.ListGroupsResponse)
			if resp.ErrorCode == 0 {
				resp.ErrorCode = s.ErrorCode
			}
			resp.Groups = append(resp.Groups, s.Groups...)
		}
		if !h.allowedCluster(req, acl.OpDescribe) {
			resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
				return !h.allowedGroup(req, acl.OpDescribe, g.Group)
			})
		}
		return resp
	}}
}
