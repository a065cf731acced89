package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinator: v0-6 (v4+ batch several keys). Key type 0 (group) names
// this broker, creating __consumer_offsets on first use. Transactions
// (type 1) and share groups (type 2) are not supported: they get
// INVALID_REQUEST, which clients do not retry, so a transactional producer
// fails at once instead of looping on a retriable error.
func init() { register(10, 0, 6, (*Handler).handleFindCoordinator) }

const (
	coordinatorTypeGroup int8 = 0
	coordinatorTypeTxn   int8 = 1
)

func (h *Handler) handleFindCoordinator(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.FindCoordinatorRequest)
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if req.Version < 4 {
		c := h.findCoordinator(ctx, r.CoordinatorType, r.CoordinatorKey)
		resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.NodeID, c.Host, c.Port
		if req.Version >= 1 {
			resp.ErrorMessage = c.ErrorMessage
		}
		return done(resp)
	}
	for _, key := range r.CoordinatorKeys {
		resp.Coordinators = append(resp.Coordinators, h.findCoordinator(ctx, r.CoordinatorType, key))
	}
	return done(resp)
}

func (h *Handler) findCoordinator(ctx context.Context, keyType int8, key string) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Port = key, -1, -1
	fail := func(code int16, msg string) kmsg.FindCoordinatorResponseCoordinator {
		c.ErrorCode, c.ErrorMessage = code, strPtr(msg)
		return c
	}
	switch keyType {
	case coordinatorTypeGroup:
	case coordinatorTypeTxn:
		return fail(kerr.InvalidRequest.Code, "transactions are not supported by this broker")
	default:
		return fail(kerr.InvalidRequest.Code, "unsupported coordinator key type; only groups (0) are served")
	}
	if h.opts.Groups == nil {
		return fail(kerr.CoordinatorNotAvailable.Code, "this broker runs no group coordinator")
	}
	if _, err := h.groups.ensureTopic(ctx); err != nil {
		h.logger.Warn("the consumer offsets topic cannot be created", "err", err)
		return fail(kerr.CoordinatorNotAvailable.Code, "the consumer offsets topic cannot be created: "+err.Error())
	}
	self := h.selfBroker()
	c.NodeID, c.Host, c.Port = self.NodeID, self.Host, self.Port
	return c
}
