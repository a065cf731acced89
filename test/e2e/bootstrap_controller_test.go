package e2e

import (
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerConn is a client of a node's controller listener, as Kafka's
// admin client with bootstrap.controllers is (KIP-919,
// kafka-metadata-quorum --bootstrap-controller): its requests go to that
// listener alone, never through Metadata.
func controllerConn(t *testing.T, addr string) kmsg.Requestor {
	t.Helper()
	cl := newClient(t, addr, kgo.RequestRetries(0))
	return cl.SeedBrokers()[0]
}

// describeControllers sends DescribeCluster v2 asking for endpointType.
func describeControllers(t *testing.T, cl kmsg.Requestor, endpointType int8) *kmsg.DescribeClusterResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.EndpointType = 2, endpointType
	resp, err := req.RequestWith(testContext(t, 10*time.Second), cl)
	if err != nil {
		t.Fatalf("DescribeCluster(endpoint type %d): %v", endpointType, err)
	}
	return resp
}

// A Kafka 4 node's controller listener serves what the admin clients
// bootstrapped from the controllers ask (KIP-919): ApiVersions with the
// controller's APIs only, DescribeCluster naming the voters at their
// controller addresses and the active controller, DescribeQuorum,
// configs and topics through the quorum, and AddRaftVoter, the way
// `kafka-metadata-quorum --bootstrap-controller ... add-controller` grows
// the quorum; Metadata closes the connection, as on Kafka's controllers.
// Raft and forwarding keep working on the same listener.
func TestBootstrapController(t *testing.T) {
	first := startKafka4Node(t, 1, "")
	_, cport, _ := net.SplitHostPort(first.Listeners[controllerListener])
	ctrl := controllerConn(t, first.Listeners[controllerListener])

	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(testContext(t, 10*time.Second), ctrl)
	if err != nil || versions.ErrorCode != 0 {
		t.Fatalf("ApiVersions on the controller listener: %v, %+v", err, versions)
	}
	served := map[int16]bool{}
	for _, k := range versions.ApiKeys {
		served[k.ApiKey] = true
	}
	for _, k := range []kmsg.Key{kmsg.ApiVersions, kmsg.DescribeCluster, kmsg.DescribeQuorum, kmsg.AddRaftVoter,
		kmsg.RemoveRaftVoter, kmsg.DescribeConfigs, kmsg.IncrementalAlterConfigs, kmsg.CreateTopics, kmsg.UpdateFeatures} {
		if !served[k.Int16()] {
			t.Errorf("the controller listener does not advertise %s", k.Name())
		}
	}
	for _, k := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.Metadata, kmsg.FindCoordinator, kmsg.JoinGroup} {
		if served[k.Int16()] {
			t.Errorf("the controller listener advertises %s, a broker API", k.Name())
		}
	}

	resp := describeControllers(t, ctrl, 2)
	if resp.ErrorCode != 0 || resp.EndpointType != 2 || resp.ClusterID == "" || resp.ControllerID != 1 ||
		len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 || resp.Brokers[0].Host != "localhost" || strconv.Itoa(int(resp.Brokers[0].Port)) != cport {
		t.Fatalf("DescribeCluster for controllers: %+v; want node 1 at localhost:%s, the active controller", resp, cport)
	}
	if resp := describeControllers(t, ctrl, 1); resp.ErrorCode != kerr.MismatchedEndpointType.Code {
		t.Fatalf("DescribeCluster for brokers on the controller listener: error %d, want MISMATCHED_ENDPOINT_TYPE", resp.ErrorCode)
	}
	if resp := describeControllers(t, newClient(t, first.Addr), 2); resp.ErrorCode != kerr.MismatchedEndpointType.Code {
		t.Fatalf("DescribeCluster for controllers on the broker listener: error %d, want MISMATCHED_ENDPOINT_TYPE", resp.ErrorCode)
	}

	qresp, q := mustDescribeQuorum(t, ctrl)
	if q.LeaderID != 1 || len(qresp.Nodes) != 1 || len(qresp.Nodes[0].Listeners) != 1 ||
		qresp.Nodes[0].Listeners[0].Name != controllerListener || strconv.Itoa(int(qresp.Nodes[0].Listeners[0].Port)) != cport {
		t.Fatalf("DescribeQuorum on the controller listener: leader %d, nodes %+v; want node 1 at its controller listener", q.LeaderID, qresp.Nodes)
	}

	// Configs and topics go through the quorum, and brokers see them.
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, ""
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "log.cleaner.backoff.ms", kmsg.StringPtr("12345")
	res.Configs = append(res.Configs, c)
	alter.Resources = append(alter.Resources, res)
	aresp, err := alter.RequestWith(testContext(t, 20*time.Second), ctrl)
	if err != nil || len(aresp.Resources) != 1 || aresp.Resources[0].ErrorCode != 0 {
		t.Fatalf("IncrementalAlterConfigs on the controller listener: %v, %+v", err, aresp)
	}
	const topic = "made-through-the-controller"
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 2, 1
	create.Topics = append(create.Topics, ct)
	create.TimeoutMillis = 20_000
	cresp, err := create.RequestWith(testContext(t, 30*time.Second), ctrl)
	if err != nil || len(cresp.Topics) != 1 || cresp.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics on the controller listener: %v, %+v", err, cresp)
	}
	adm := newAdmin(t, first.Addr)
	if ps, err := partitions(t, adm, topic); err != nil || len(ps) != 2 {
		t.Fatalf("the topic made through the controller, from the broker listener: %v, %v", ps, err)
	}
	described, err := adm.DescribeBrokerConfigs(testContext(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rc := range described {
		for _, c := range rc.Configs {
			found = found || c.Key == "log.cleaner.backoff.ms" && c.MaybeValue() == "12345"
		}
	}
	if !found {
		t.Fatalf("the cluster-wide config set through the controller does not describe from the broker listener: %+v", described)
	}

	// Metadata is a broker API, which the controller listener does not
	// serve.
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testContext(t, 10*time.Second), ctrl); err == nil {
		t.Fatal("Metadata on the controller listener answered")
	}

	// A second node joins with the first as its bootstrap controller; the
	// first's controller listener makes it a voter, and each controller
	// listener names both.
	second := startKafka4Node(t, 2, advertisedController(first))
	ctrl = controllerConn(t, first.Listeners[controllerListener])
	observer := waitObserver(t, ctrl, 2)
	waitAddRaftVoter(t, ctrl, nil, 2, observer.ReplicaDirectoryID, advertisedController(second))
	for _, at := range []string{first.Listeners[controllerListener], second.Listeners[controllerListener]} {
		resp := describeControllers(t, controllerConn(t, at), 2)
		var ids []int32
		for _, b := range resp.Brokers {
			ids = append(ids, b.NodeID)
		}
		if resp.ErrorCode != 0 || !slices.Equal(ids, []int32{1, 2}) || resp.ControllerID != 1 && resp.ControllerID != 2 {
			t.Fatalf("DescribeCluster for controllers at %s: %+v; want nodes 1 and 2, one of them active", at, resp)
		}
	}
}
