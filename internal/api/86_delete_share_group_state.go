package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteShareGroupState (KIP-932): a share-partition leader on another broker deletes a share-partition's state
// through the share coordinator here (share_state.go: CLUSTER_ACTION, one
// share-partition per request). Versions: what the coordinator implements
// (sharestate.MaxVersions).
func init() { register(86, 0, shareStateMax(86), (*Handler).handleDeleteShareGroupState) }

func (h *Handler) handleDeleteShareGroupState(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteShareGroupStateRequest)
	return h.serveShareState(ctx, req, r.GroupID)
}
