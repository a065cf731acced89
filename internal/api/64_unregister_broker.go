package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// UnregisterBroker: v0 (KIP-631), what `kafka-cluster unregister --id N`
// and Admin.unregisterBroker send for a decommissioned broker. ALTER on
// the cluster. The controller removes the broker's registration, so it
// leaves DescribeCluster (fenced brokers included), the fenced-broker
// count and, unless it is a voter, the metadata quorum; its partitions keep naming it as an offline replica (reassign
// them away first). BROKER_ID_NOT_REGISTERED for an unknown id; a running
// (unfenced) broker is refused with INVALID_REQUEST, where Kafka would
// unregister it under its feet: stop it first.
func init() { register(64, 0, 0, (*Handler).handleUnregisterBroker) }

func (h *Handler) handleUnregisterBroker(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.UnregisterBrokerRequest)
	resp := r.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	if !h.allowedCluster(req, acl.OpAlter) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return done(resp)
	}
	err := h.opts.Meta.UnregisterBroker(ctx, r.BrokerID)
	var code int16
	var msg string
	switch {
	case errors.Is(err, metadata.ErrUnknownBroker):
		code, msg = kerr.BrokerIDNotRegistered.Code, err.Error()
	case errors.Is(err, metadata.ErrBrokerNotFenced):
		code, msg = kerr.InvalidRequest.Code, err.Error()
	default:
		code, msg = controllerAnswerCode(err)
	}
	resp.ErrorCode = code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	return done(resp)
}
