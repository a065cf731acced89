package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerId: v0-4. An idempotent producer (no transactional id) gets
// a producer id never handed out before, at epoch 0. A transactional
// producer is served by its transactional id's coordinator (fencing older
// epochs, KIP-360 epoch bumps).
func init() { register(22, 0, txnMax(22), (*Handler).handleInitProducerID) }

func (h *Handler) handleInitProducerID(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.InitProducerIDRequest)
	if r.TransactionalID != nil {
		return h.txns.reply(ctx, req, *r.TransactionalID)
	}
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	id, err := h.opts.Broker.NextProducerID()
	if err != nil {
		h.logger.Error("allocating a producer id", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code // retriable: the disk may recover
		return done(resp)
	}
	resp.ProducerID, resp.ProducerEpoch = int64(id), 0
	return done(resp)
}
