package api

import (
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// A cluster node's controller listener serves, besides Raft and
// forwarding, the admin clients bootstrapped from the controllers (Kafka
// 3.7+, KIP-919: `kafka-metadata-quorum --bootstrap-controller`, the admin
// client's bootstrap.controllers). It serves the admin APIs Kafka's
// controllers serve (ControllerApis), and of the others none: the admin
// client learns the controllers from DescribeCluster with EndpointType 2,
// not from Metadata. Every one is answered as on a broker listener, by
// this node, which takes to the quorum what needs it; DescribeCluster
// names the controllers (the quorum's voters at their controller
// addresses) and the active one, and DescribeQuorum's nodes their
// controller addresses.
var controllerListenerAPIs = map[int16]bool{
	kmsg.SASLHandshake.Int16():              true,
	kmsg.ApiVersions.Int16():                true,
	kmsg.CreateTopics.Int16():               true,
	kmsg.DeleteTopics.Int16():               true,
	kmsg.DescribeACLs.Int16():               true,
	kmsg.CreateACLs.Int16():                 true,
	kmsg.DeleteACLs.Int16():                 true,
	kmsg.DescribeConfigs.Int16():            true,
	kmsg.AlterConfigs.Int16():               true,
	kmsg.SASLAuthenticate.Int16():           true,
	kmsg.CreatePartitions.Int16():           true,
	kmsg.CreateDelegationToken.Int16():      true,
	kmsg.RenewDelegationToken.Int16():       true,
	kmsg.ExpireDelegationToken.Int16():      true,
	kmsg.ElectLeaders.Int16():               true,
	kmsg.IncrementalAlterConfigs.Int16():    true,
	kmsg.AlterPartitionAssignments.Int16():  true,
	kmsg.ListPartitionReassignments.Int16(): true,
	kmsg.AlterClientQuotas.Int16():          true,
	kmsg.AlterUserSCRAMCredentials.Int16():  true,
	kmsg.DescribeQuorum.Int16():             true,
	kmsg.UpdateFeatures.Int16():             true,
	kmsg.DescribeCluster.Int16():            true,
	kmsg.UnregisterBroker.Int16():           true,
	kmsg.AddRaftVoter.Int16():               true,
	kmsg.RemoveRaftVoter.Int16():            true,
}

// SupportedOnControllerListener reports whether key at version is served
// on the controller listener: a controller API this broker serves.
func (h *Handler) SupportedOnControllerListener(key, version int16) bool {
	return controllerListenerAPIs[key] && h.Supported(key, version)
}

// onControllerListener reports whether req came on the controller
// listener, which only a cluster node has.
func (h *Handler) onControllerListener(req *Request) bool {
	return h.opts.Config.Clustered() && req.Listener == h.opts.Config.ControllerListenerName
}

// servedOn reports whether key is served on the listener req came on.
func (h *Handler) servedOn(req *Request, key int16) bool {
	return !h.off[key] && (!h.onControllerListener(req) || controllerListenerAPIs[key])
}

// describeControllers answers DescribeCluster on the controller listener
// as Kafka's controllers do: EndpointType 2 (controllers) only, ALTER on
// the cluster needed, the quorum's voters at their controller addresses,
// and the active controller (-1 while none is known or it is not among
// them).
func (h *Handler) describeControllers(req *Request, r *kmsg.DescribeClusterRequest, resp *kmsg.DescribeClusterResponse) Reply {
	if code, msg, ok := controllerEndpointType(r); !ok {
		resp.ErrorCode, resp.ErrorMessage = code, kmsg.StringPtr(msg)
		return done(resp)
	}
	if !h.allowedCluster(req, acl.OpAlter) {
		resp.ErrorCode = clusterDenied
		resp.ErrorMessage = kmsg.StringPtr("DescribeCluster on the controller listener needs ALTER on the cluster, as in Kafka")
		return done(resp)
	}
	resp.EndpointType = endpointTypeController
	resp.ClusterAuthorizedOperations = -2147483648
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = h.authorizedOps(req, acl.ResourceCluster, acl.ClusterName)
	}
	leader, known := h.opts.Meta.Leader()
	resp.ControllerID = -1
	for _, c := range h.opts.Meta.Controllers() {
		addr, ok := splitAddress(c.Addr)
		if !ok {
			continue
		}
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port = c.NodeID, addr.Host, addr.Port
		resp.Brokers = append(resp.Brokers, b)
		if known && c.NodeID == leader {
			resp.ControllerID = leader
		}
	}
	return done(resp)
}

// controllerEndpointType checks a DescribeCluster's EndpointType on the
// controller listener: 2 (controllers) is ok; another known one is
// MISMATCHED_ENDPOINT_TYPE, an unknown one UNSUPPORTED_ENDPOINT_TYPE, and
// both INVALID_REQUEST at v0, which cannot name one (Kafka's answers).
func controllerEndpointType(r *kmsg.DescribeClusterRequest) (code int16, msg string, ok bool) {
	switch r.EndpointType {
	case endpointTypeController:
		return 0, "", true
	case endpointTypeBroker:
		code, msg = kerr.MismatchedEndpointType.Code, "this is a controller endpoint, and the request asks for brokers: use --bootstrap-server with a broker listener"
	default:
		code, msg = kerr.UnsupportedEndpointType.Code, "endpoint type "+strconv.Itoa(int(r.EndpointType))+" is neither 1 (brokers) nor 2 (controllers)"
	}
	if r.Version == 0 {
		code = kerr.InvalidRequest.Code
	}
	return code, msg, false
}

// splitAddress parses host:port; ok is false for anything a client could
// not connect to.
func splitAddress(hostPort string) (Address, bool) {
	host, portStr, err := net.SplitHostPort(hostPort)
	if err != nil || host == "" {
		return Address{}, false
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil || port <= 0 || port > 65535 {
		return Address{}, false
	}
	return Address{Host: host, Port: int32(port)}, true
}
