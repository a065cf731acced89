package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReadShareGroupStateSummary (KIP-932): a share-partition leader on another broker reads a share-partition's start offset and epochs
// through the share coordinator here (share_state.go: CLUSTER_ACTION, one
// share-partition per request). Versions: what the coordinator implements
// (sharestate.MaxVersions).
func init() { register(87, 0, shareStateMax(87), (*Handler).handleReadShareGroupStateSummary) }

func (h *Handler) handleReadShareGroupStateSummary(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ReadShareGroupStateSummaryRequest)
	return h.serveShareState(ctx, req, r.GroupID)
}
