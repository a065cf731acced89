package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// OffsetDelete: deletes committed offsets of partitions no member consumes.
// Versions: what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(47, 0, groupMax(47), (*Handler).handleOffsetDelete) }

func (h *Handler) handleOffsetDelete(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.OffsetDeleteRequest)
	if !h.allowedGroup(req, acl.OpDelete, r.Group) {
		return h.groups.replyIf(ctx, req, r.Group, false, groupDenied)
	}
	denied := h.deniedTopics(req, acl.OpRead, offsetDeleteTopics(r))
	if len(denied) == 0 {
		return h.groups.reply(ctx, req, r.Group)
	}
	// The partitions of topics the principal may not read are answered
	// here; the coordinator deletes the others.
	fwd := *r
	fwd.Topics = nil
	for _, t := range r.Topics {
		if !denied[t.Topic] {
			fwd.Topics = append(fwd.Topics, t)
		}
	}
	sub := *req
	sub.Body = &fwd
	reply := h.groups.reply(ctx, &sub, r.Group)
	return afterReply(reply, func(resp kmsg.Response) {
		od, ok := resp.(*kmsg.OffsetDeleteResponse)
		if !ok || od.ErrorCode != 0 {
			return
		}
		for _, t := range r.Topics {
			if !denied[t.Topic] {
				continue
			}
			st := kmsg.NewOffsetDeleteResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewOffsetDeleteResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, topicDenied
				st.Partitions = append(st.Partitions, sp)
			}
			od.Topics = append(od.Topics, st)
		}
	})
}
