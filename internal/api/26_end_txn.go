package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// EndTxn: commit or abort. Answered once the coordinator has durably
// decided (PrepareCommit/PrepareAbort); the markers are written after, and
// the producer's next transaction waits for them (CONCURRENT_TRANSACTIONS).
func init() { register(26, 0, txnMax(26), (*Handler).handleEndTxn) }

func (h *Handler) handleEndTxn(ctx context.Context, req *Request) Reply {
	id := req.Body.(*kmsg.EndTxnRequest).TransactionalID
	return h.txns.replyIf(ctx, req, id, h.allowedTxn(req, acl.OpWrite, id), txnDenied)
}
