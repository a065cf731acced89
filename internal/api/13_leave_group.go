package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup: removes one member (v0-2) or a batch of members (v3+).
// Versions: what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(13, 0, groupMax(13), (*Handler).handleLeaveGroup) }

func (h *Handler) handleLeaveGroup(ctx context.Context, req *Request) Reply {
	return h.groups.reply(ctx, req, req.Body.(*kmsg.LeaveGroupRequest).Group)
}
