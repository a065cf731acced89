package api

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DescribeCluster: v0-2. The live brokers (this one alone on a single
// node), or with IncludeFencedBrokers (v2, KIP-1073) every registered one,
// marked when fenced; this broker is named controller, as any broker
// serves the controller's APIs (it forwards to the quorum). A broker
// listener answers only EndpointType 1 (brokers), as Kafka's: 2
// (controllers, kafka-metadata-quorum --bootstrap-controller) is
// MISMATCHED_ENDPOINT_TYPE, another value UNSUPPORTED_ENDPOINT_TYPE. Open
// to every principal, as in Kafka; the authorized operations on the
// cluster are computed when asked for. The controller listener answers
// with the controllers instead (controller_listener.go).
func init() { register(60, 0, 2, (*Handler).handleDescribeCluster) }

const (
	endpointTypeBroker     = 1
	endpointTypeController = 2
)

func (h *Handler) handleDescribeCluster(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeClusterRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	img := h.opts.Meta.Image()
	resp.ClusterID = img.ClusterID
	if h.onControllerListener(req) {
		return h.describeControllers(req, r, resp)
	}
	switch r.EndpointType {
	case endpointTypeBroker:
	case endpointTypeController:
		resp.ErrorCode = kerr.MismatchedEndpointType.Code
		resp.ErrorMessage = kmsg.StringPtr("this is a broker endpoint, and the request asks for controllers: " +
			"every Strata node serves the controller's APIs on its broker listeners (use --bootstrap-server)")
		return done(resp)
	default:
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("endpoint type %d is neither 1 (brokers) nor 2 (controllers)", r.EndpointType))
		return done(resp)
	}

	resp.ClusterAuthorizedOperations = -2147483648
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = h.authorizedOps(req, acl.ResourceCluster, acl.ClusterName)
	}
	resp.EndpointType = r.EndpointType
	live := h.liveBrokers(img, req.Listener)
	resp.ControllerID = h.controllerOf(live)
	listed, fenced := live, map[int32]bool{}
	if r.IncludeFencedBrokers {
		listed, fenced = h.registeredBrokers(img, req.Listener)
	}
	for _, lb := range listed {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port, b.IsFenced = lb.ID, lb.Addr.Host, lb.Addr.Port, fenced[lb.ID]
		b.Rack = strPtr(lb.Rack)
		resp.Brokers = append(resp.Brokers, b)
	}
	return done(resp)
}
