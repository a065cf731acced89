package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// Heartbeat: keeps a member's session and tells it of a rebalance. Versions:
// what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(12, 0, groupMax(12), (*Handler).handleHeartbeat) }

func (h *Handler) handleHeartbeat(ctx context.Context, req *Request) Reply {
	g := req.Body.(*kmsg.HeartbeatRequest).Group
	return h.groups.replyIf(ctx, req, g, h.allowedGroup(req, acl.OpRead, g), groupDenied)
}
