package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// FindCoordinator: v0-6 (v4+ batch several keys). Key types 0 (group) and
// 1 (transaction) name the leader of the key's partition (this broker on a
// single node), creating __consumer_offsets or
// __transaction_state on first use. Share groups (type 2) are not
// supported: they get INVALID_REQUEST.
func init() { register(10, 0, 6, (*Handler).handleFindCoordinator) }

const (
	coordinatorTypeGroup int8 = 0
	coordinatorTypeTxn   int8 = 1
)

func (h *Handler) handleFindCoordinator(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.FindCoordinatorRequest)
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if req.Version < 4 {
		c := h.findCoordinator(ctx, req, r.CoordinatorType, r.CoordinatorKey)
		resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.NodeID, c.Host, c.Port
		if req.Version >= 1 {
			resp.ErrorMessage = c.ErrorMessage
		}
		return done(resp)
	}
	for _, key := range r.CoordinatorKeys {
		resp.Coordinators = append(resp.Coordinators, h.findCoordinator(ctx, req, r.CoordinatorType, key))
	}
	return done(resp)
}

func (h *Handler) findCoordinator(ctx context.Context, req *Request, keyType int8, key string) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.Key, c.NodeID, c.Port = key, -1, -1
	fail := func(code int16, msg string) kmsg.FindCoordinatorResponseCoordinator {
		c.ErrorCode, c.ErrorMessage = code, strPtr(msg)
		return c
	}
	var kind *coordinators
	switch keyType {
	case coordinatorTypeGroup:
		if !h.allowedGroup(req, acl.OpDescribe, key) {
			return fail(groupDenied, "not authorized to describe this group")
		}
		kind = h.groups
	case coordinatorTypeTxn:
		if key == "" {
			return fail(kerr.InvalidRequest.Code, "a transactional id must not be empty")
		}
		if !h.allowedTxn(req, acl.OpDescribe, key) {
			return fail(txnDenied, "not authorized to describe this transactional id")
		}
		kind = h.txns
	default:
		return fail(kerr.InvalidRequest.Code, "unsupported coordinator key type; groups (0) and transactions (1) are served")
	}
	if kind.rt == nil {
		return fail(kerr.CoordinatorNotAvailable.Code, "this broker runs no coordinator for "+kind.topic)
	}
	t, err := kind.ensureTopic(ctx)
	if err != nil {
		h.logger.Warn("an internal topic cannot be created", "topic", kind.topic, "err", err)
		return fail(kerr.CoordinatorNotAvailable.Code, kind.topic+" cannot be created: "+err.Error())
	}
	// The coordinator is the leader of the key's partition (this broker
	// on a single node).
	part, ok := kind.partitionFor(key)
	if !ok || int(part) >= len(t.Partitions) {
		return fail(kerr.CoordinatorNotAvailable.Code, kind.topic+" is not in this broker's metadata yet")
	}
	leader := t.Partitions[part].Leader
	addr, ok := h.brokerAddress(h.opts.Meta.Image(), leader, req.Listener)
	if leader == metadata.NoLeader || !ok {
		return fail(kerr.CoordinatorNotAvailable.Code, "the coordinator's partition of "+kind.topic+" has no live leader")
	}
	c.NodeID, c.Host, c.Port = leader, addr.Host, addr.Port
	return c
}
