package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// SyncGroup: the leader hands out assignments; the others wait for theirs.
// Versions: what the coordinator implements (group.MaxVersions); the group's
// __consumer_offsets partition serves it.
func init() { register(14, 0, groupMax(14), (*Handler).handleSyncGroup) }

func (h *Handler) handleSyncGroup(ctx context.Context, req *Request) Reply {
	g := req.Body.(*kmsg.SyncGroupRequest).Group
	return h.groups.replyIf(ctx, req, g, h.allowedGroup(req, acl.OpRead, g), groupDenied)
}
