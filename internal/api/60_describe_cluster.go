package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DescribeCluster: v0-1. The live brokers (this one alone on a single
// node); this broker is named controller, as any broker serves the
// controller's APIs (it forwards to the quorum). Open to
// every principal, as in Kafka; the authorized operations on the cluster
// are computed when asked for.
func init() { register(60, 0, 1, (*Handler).handleDescribeCluster) }

func (h *Handler) handleDescribeCluster(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeClusterRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID = h.opts.Meta.Image().ClusterID

	resp.ClusterAuthorizedOperations = -2147483648
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = h.authorizedOps(req, acl.ResourceCluster, acl.ClusterName)
	}
	resp.EndpointType = r.EndpointType
	live := h.liveBrokers(h.opts.Meta.Image(), req.Listener)
	resp.ControllerID = h.controllerOf(live)
	for _, lb := range live {
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port = lb.ID, lb.Addr.Host, lb.Addr.Port
		if lb.Rack != "" {
			b.Rack = strPtr(lb.Rack)
		}
		resp.Brokers = append(resp.Brokers, b)
	}
	return done(resp)
}
