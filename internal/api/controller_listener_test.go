package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every API the controller listener lists is one this broker implements,
// and none of the broker-only APIs a client must not reach there is.
func TestControllerListenerAPIsAreRegistered(t *testing.T) {
	for key := range controllerListenerAPIs {
		if _, ok := registry[key]; !ok {
			t.Errorf("controller listener API %s is not registered", kmsg.NameForKey(key))
		}
	}
	for _, k := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.Metadata, kmsg.ListOffsets, kmsg.FindCoordinator,
		kmsg.JoinGroup, kmsg.InitProducerID, kmsg.DescribeLogDirs, kmsg.DescribeClientQuotas} {
		if controllerListenerAPIs[k.Int16()] {
			t.Errorf("%s is served on the controller listener; Kafka's controllers do not serve it", k.Name())
		}
	}
}

func TestControllerEndpointType(t *testing.T) {
	for _, tc := range []struct {
		version      int16
		endpointType int8
		code         int16
	}{
		{2, endpointTypeController, 0},
		{1, endpointTypeController, 0},
		{2, endpointTypeBroker, kerr.MismatchedEndpointType.Code},
		{0, endpointTypeBroker, kerr.InvalidRequest.Code}, // v0 cannot ask for controllers
		{2, 7, kerr.UnsupportedEndpointType.Code},
		{2, 0, kerr.UnsupportedEndpointType.Code},
	} {
		r := kmsg.NewPtrDescribeClusterRequest()
		r.Version, r.EndpointType = tc.version, tc.endpointType
		code, msg, ok := controllerEndpointType(r)
		if code != tc.code || ok != (tc.code == 0) || ok != (msg == "") {
			t.Errorf("v%d endpoint type %d: %d %q %v, want code %d", tc.version, tc.endpointType, code, msg, ok, tc.code)
		}
	}
}

func TestSplitAddress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Address
		ok   bool
	}{
		{"localhost:9093", Address{"localhost", 9093}, true},
		{"10.0.0.1:1", Address{"10.0.0.1", 1}, true},
		{"[::1]:9093", Address{"::1", 9093}, true},
		{"localhost", Address{}, false},
		{":9093", Address{}, false},
		{"host:0", Address{}, false},
		{"host:65536", Address{}, false},
		{"host:port", Address{}, false},
	} {
		got, ok := splitAddress(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("splitAddress(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// On a cluster node's controller listener, DescribeCluster asks for ALTER
// on the cluster (Kafka's controllers do), and ApiVersions lists the
// controller's APIs only; the broker listeners answer as before.
func TestControllerListenerRequests(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.h.opts.Config.QuorumVoters = map[int32]string{1: "127.0.0.1:9093"} // a cluster node
	ctrl := rh.h.opts.Config.ControllerListenerName
	ask := func(listener, principal string, body kmsg.Request) kmsg.Response {
		t.Helper()
		body.SetVersion(body.MaxVersion())
		reply := rh.h.Handle(t.Context(), &Request{Key: body.Key(), Version: body.MaxVersion(), Body: body, Principal: principal, Listener: listener})
		return reply.Resp
	}
	controllers := kmsg.NewPtrDescribeClusterRequest()
	controllers.EndpointType = endpointTypeController
	if resp := ask(ctrl, "User:mallory", controllers).(*kmsg.DescribeClusterResponse); resp.ErrorCode != clusterDenied {
		t.Errorf("DescribeCluster on the controller listener without ALTER: error %d, want CLUSTER_AUTHORIZATION_FAILED", resp.ErrorCode)
	}
	if resp := ask(ctrl, "User:admin", controllers).(*kmsg.DescribeClusterResponse); resp.ErrorCode != 0 || resp.EndpointType != endpointTypeController {
		t.Errorf("DescribeCluster on the controller listener as a super user: %+v", resp)
	}
	brokers := kmsg.NewPtrDescribeClusterRequest()
	if resp := ask("PLAINTEXT", "User:mallory", brokers).(*kmsg.DescribeClusterResponse); resp.ErrorCode != 0 || len(resp.Brokers) != 3 {
		t.Errorf("DescribeCluster on a broker listener, open to all: %+v", resp)
	}
	served := func(listener string) map[int16]bool {
		out := map[int16]bool{}
		for _, k := range ask(listener, "User:admin", kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse).ApiKeys {
			out[k.ApiKey] = true
		}
		return out
	}
	onCtrl, onBroker := served(ctrl), served("PLAINTEXT")
	if onCtrl[kmsg.Produce.Int16()] || onCtrl[kmsg.Metadata.Int16()] || !onCtrl[kmsg.DescribeCluster.Int16()] || !onCtrl[kmsg.AddRaftVoter.Int16()] {
		t.Errorf("ApiVersions on the controller listener lists %v", onCtrl)
	}
	if !onBroker[kmsg.Produce.Int16()] || !onBroker[kmsg.Metadata.Int16()] {
		t.Errorf("ApiVersions on a broker listener lists %v", onBroker)
	}
	if rh.h.SupportedOnControllerListener(kmsg.Produce.Int16(), 9) || !rh.h.SupportedOnControllerListener(kmsg.DescribeQuorum.Int16(), 2) {
		t.Error("SupportedOnControllerListener does not follow the controller's APIs")
	}
}
