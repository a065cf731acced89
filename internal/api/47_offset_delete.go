package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete: deletes committed offsets of partitions no member consumes.
// Versions: what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(47, 0, groupMax(47), (*Handler).handleOffsetDelete) }

func (h *Handler) handleOffsetDelete(ctx context.Context, req *Request) Reply {
	return h.groups.reply(ctx, req, req.Body.(*kmsg.OffsetDeleteRequest).Group)
}
