package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit: commits offsets for a group (members with their generation,
// or simple commits with generation -1). v10 names topics by id and is not
// advertised. Versions: what the coordinator implements (group.MaxVersions);
// the group's __consumer_offsets partition serves it.
func init() { register(8, 0, groupMax(8), (*Handler).handleOffsetCommit) }

func (h *Handler) handleOffsetCommit(ctx context.Context, req *Request) Reply {
	return h.groupReply(ctx, req, req.Body.(*kmsg.OffsetCommitRequest).Group)
}
