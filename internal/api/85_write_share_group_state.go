package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// WriteShareGroupState (KIP-932): a share-partition leader on another broker writes a share-partition's in-flight state
// through the share coordinator here (share_state.go: CLUSTER_ACTION, one
// share-partition per request). Versions: what the coordinator implements
// (sharestate.MaxVersions).
func init() { register(85, 0, shareStateMax(85), (*Handler).handleWriteShareGroupState) }

func (h *Handler) handleWriteShareGroupState(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.WriteShareGroupStateRequest)
	return h.serveShareState(ctx, req, r.GroupID)
}
