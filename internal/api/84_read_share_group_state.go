package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReadShareGroupState (KIP-932): a share-partition leader on another broker reads a share-partition's state, at the reader's leader epoch
// through the share coordinator here (share_state.go: CLUSTER_ACTION, one
// share-partition per request). Versions: what the coordinator implements
// (sharestate.MaxVersions).
func init() { register(84, 0, shareStateMax(84), (*Handler).handleReadShareGroupState) }

func (h *Handler) handleReadShareGroupState(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ReadShareGroupStateRequest)
	return h.serveShareState(ctx, req, r.GroupID)
}
