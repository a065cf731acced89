package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerId: v0-4 for idempotent producers: each call gets a producer
// id never handed out before, at epoch 0. A transactional.id is refused
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, not retriable) until transactions
// exist, so a transactional client fails fast instead of looping.
func init() { register(22, 0, 4, (*Handler).handleInitProducerID) }

func (h *Handler) handleInitProducerID(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.InitProducerIDRequest)
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if r.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
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
