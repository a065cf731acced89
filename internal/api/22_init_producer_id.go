package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// InitProducerId: v0-4. An idempotent producer (no transactional id) gets
// a producer id never handed out before, at epoch 0. A transactional
// producer is served by its transactional id's coordinator (fencing older
// epochs, KIP-360 epoch bumps). Authorization as in Kafka: WRITE on the
// transactional id; an idempotent producer needs IDEMPOTENT_WRITE on the
// cluster or WRITE on some topic (KIP-679).
func init() { register(22, 0, txnMax(22), (*Handler).handleInitProducerID) }

func (h *Handler) handleInitProducerID(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.InitProducerIDRequest)
	if r.TransactionalID != nil {
		id := *r.TransactionalID
		return h.txns.replyIf(ctx, req, id, h.allowedTxn(req, acl.OpWrite, id), txnDenied)
	}
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if !h.allowedCluster(req, acl.OpIdempotentWrite) && !h.allowedOnSomeTopic(req, acl.OpWrite) {
		resp.ErrorCode = clusterDenied
		return done(resp)
	}
	id, err := h.opts.Broker.NextProducerID()
	if err != nil {
		h.logger.Error("allocating a producer id", "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code // retriable: the disk may recover
		return done(resp)
	}
	resp.ProducerID, resp.ProducerEpoch = int64(id), 0
	return done(resp)
}
