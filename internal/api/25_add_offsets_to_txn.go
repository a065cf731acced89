package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddOffsetsToTxn: the transaction will commit offsets of a group; the
// coordinator adds the group's __consumer_offsets partition to it.
func init() { register(25, 0, txnMax(25), (*Handler).handleAddOffsetsToTxn) }

func (h *Handler) handleAddOffsetsToTxn(ctx context.Context, req *Request) Reply {
	return h.txns.reply(ctx, req, req.Body.(*kmsg.AddOffsetsToTxnRequest).TransactionalID)
}
