package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitializeShareGroupState (KIP-932): a share-partition leader on another broker creates a share-partition's state with a start offset
// through the share coordinator here (share_state.go: CLUSTER_ACTION, one
// share-partition per request). Versions: what the coordinator implements
// (sharestate.MaxVersions).
func init() { register(83, 0, shareStateMax(83), (*Handler).handleInitializeShareGroupState) }

func (h *Handler) handleInitializeShareGroupState(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.InitializeShareGroupStateRequest)
	return h.serveShareState(ctx, req, r.GroupID)
}
