package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat: keeps a member's session and tells it of a rebalance. Versions:
// what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(12, 0, groupMax(12), (*Handler).handleHeartbeat) }

func (h *Handler) handleHeartbeat(ctx context.Context, req *Request) Reply {
	return h.groups.reply(ctx, req, req.Body.(*kmsg.HeartbeatRequest).Group)
}
