package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// JoinGroup: a member joins (or rejoins) a group; the reply waits for the
// rebalance, up to the rebalance timeout. Versions: what the coordinator
// implements (group.MaxVersions); the group's __consumer_offsets partition
// serves it.
func init() { register(11, 0, groupMax(11), (*Handler).handleJoinGroup) }

func (h *Handler) handleJoinGroup(ctx context.Context, req *Request) Reply {
	g := req.Body.(*kmsg.JoinGroupRequest).Group
	return h.groups.replyIf(ctx, req, g, h.allowedGroup(req, acl.OpRead, g), groupDenied)
}
