package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/coordinator/group"
)

// OffsetFetch: versions as the coordinator implements them, and v10, which
// names topics by id (offsets_by_id.go). v8+ may ask for several groups:
// they are split by coordinator partition and the answers merged in
// request order.
func init() { register(9, 0, topicIDsVersion, (*Handler).handleOffsetFetch) }

func (h *Handler) handleOffsetFetch(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.OffsetFetchRequest)
	if req.Version < 8 {
		return h.offsetFetchV0(ctx, req, r)
	}
	ids := make([]string, len(r.Groups))
	asked := make(map[string]kmsg.OffsetFetchRequestGroup, len(r.Groups))
	var allowedIDs []string // the groups the principal may describe
	denied := map[string]bool{}
	img, byID := h.opts.Meta.Image(), r.Version >= topicIDsVersion
	topicIDsOf, unresolved := topicIDs{}, map[string][]kmsg.OffsetFetchResponseGroupTopic{}
	for i, g := range r.Groups {
		ids[i] = g.Group
		if _, dup := asked[g.Group]; !dup {
			if byID {
				g.Topics, unresolved[g.Group] = resolveFetchTopics(img, g.Topics, topicIDsOf)
			}
			asked[g.Group] = g
			if h.allowedGroup(req, acl.OpDescribe, g.Group) {
				allowedIDs = append(allowedIDs, g.Group)
			} else {
				denied[g.Group] = true
			}
		}
	}
	byPart, ok := h.groups.split(allowedIDs)
	if !ok {
		return done(group.ErrorResponse(r, kerr.NotCoordinator.Code))
	}
	version := req.Version
	if byID {
		version = beforeTopicIDsVersion
	}
	wait := h.groups.fanOutAt(req, version, byPart, func(ids []string) kmsg.Request {
		sub := kmsg.NewPtrOffsetFetchRequest()
		sub.RequireStable = r.RequireStable
		for _, id := range ids {
			sub.Groups = append(sub.Groups, asked[id])
		}
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		answered := map[string]kmsg.OffsetFetchResponseGroup{}
		for _, sub := range wait(ctx) {
			for _, g := range sub.(*kmsg.OffsetFetchResponse).Groups {
				h.hideGroupOffsetTopics(req, &g, asked[g.Group].Topics == nil)
				if byID {
					fetchTopicsByID(img, &g, topicIDsOf)
					g.Topics = append(g.Topics, unresolved[g.Group]...)
				}
				answered[g.Group] = g
			}
		}
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		for _, id := range ids {
			g, ok := answered[id]
			switch {
			case !ok && denied[id]: // decided when the request came, not now
				g = deniedOffsetGroup(id)
			case !ok:
				panic("api: the coordinator did not answer for group " + id)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}}
}

// offsetFetchV0 answers one group (v0-7): GROUP_AUTHORIZATION_FAILED
// without DESCRIBE on it, else the coordinator's answer without the topics
// the principal may not describe.
func (h *Handler) offsetFetchV0(ctx context.Context, req *Request, r *kmsg.OffsetFetchRequest) Reply {
	if !h.allowedGroup(req, acl.OpDescribe, r.Group) {
		return done(group.ErrorResponse(r, groupDenied))
	}
	reply := h.groups.reply(ctx, req, r.Group)
	if h.policy == nil {
		return reply
	}
	return afterReply(reply, func(resp kmsg.Response) {
		if fetched, ok := resp.(*kmsg.OffsetFetchResponse); ok {
			h.hideOffsetTopicsV0(req, fetched, r.Topics == nil)
		}
	})
}
