package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup: the leader hands out assignments; the others wait for theirs.
// Versions: what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(14, 0, groupMax(14), (*Handler).handleSyncGroup) }

func (h *Handler) handleSyncGroup(ctx context.Context, req *Request) Reply {
	return h.groups.reply(ctx, req, req.Body.(*kmsg.SyncGroupRequest).Group)
}
