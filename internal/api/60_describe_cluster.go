package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DescribeCluster: v0-1. One broker, which is also the controller. Open to
// every principal, as in Kafka; the authorized operations on the cluster
// are computed when asked for.
func init() { register(60, 0, 1, (*Handler).handleDescribeCluster) }

func (h *Handler) handleDescribeCluster(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeClusterRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID = h.opts.Meta.Image().ClusterID
	resp.ControllerID = h.opts.Broker.NodeID()
	resp.ClusterAuthorizedOperations = -2147483648
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = h.authorizedOps(req, acl.ResourceCluster, acl.ClusterName)
	}
	resp.EndpointType = r.EndpointType
	b := kmsg.NewDescribeClusterResponseBroker()
	a := h.advertised(req.Listener)
	b.NodeID, b.Host, b.Port = h.opts.Broker.NodeID(), a.Host, a.Port
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	return done(resp)
}
