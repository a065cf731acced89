package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// LeaveGroup: removes one member (v0-2) or a batch of members (v3+).
// Versions: what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(13, 0, groupMax(13), (*Handler).handleLeaveGroup) }

func (h *Handler) handleLeaveGroup(ctx context.Context, req *Request) Reply {
	g := req.Body.(*kmsg.LeaveGroupRequest).Group
	return h.groups.replyIf(ctx, req, g, h.allowedGroup(req, acl.OpRead, g), groupDenied)
}
