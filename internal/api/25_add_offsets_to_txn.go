package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// AddOffsetsToTxn: the transaction will commit offsets of a group; the
// coordinator adds the group's __consumer_offsets partition to it.
func init() { register(25, 0, txnMax(25), (*Handler).handleAddOffsetsToTxn) }

func (h *Handler) handleAddOffsetsToTxn(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AddOffsetsToTxnRequest)
	if !h.allowedTxn(req, acl.OpWrite, r.TransactionalID) {
		return h.txns.replyIf(ctx, req, r.TransactionalID, false, txnDenied)
	}
	return h.txns.replyIf(ctx, req, r.TransactionalID, h.allowedGroup(req, acl.OpRead, r.Group), groupDenied)
}
