package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (rh *replicaHarness) listConfigResources(version int16, principal string, types ...int8) (int16, []string) {
	rh.t.Helper()
	r := kmsg.NewPtrListConfigResourcesRequest()
	r.ResourceTypes = types
	resp := rh.handle(74, version, r, principal).(*kmsg.ListConfigResourcesResponse)
	var rows []string
	for _, cr := range resp.ConfigResources {
		rows = append(rows, kmsg.ConfigResourceType(cr.Type).String()+":"+cr.Name)
	}
	return resp.ErrorCode, rows
}

// ListConfigResources lists as Kafka's handleListConfigResources: v0 the
// client metrics subscriptions, v1 the requested types (all when none) in
// Kafka's type order, sorted within a type; a type it does not know fails
// the request.
func TestListConfigResources(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("t2", nil, []int32{1})
	rh.createTopic("t1", nil, []int32{1})
	for _, name := range []string{"s2", "s1"} {
		if code, msg := rh.incrementalConfigs(resourceClientMetrics, name, false, "SET interval.ms=1000"); code != 0 {
			t.Fatalf("subscription %s: %d %s", name, code, msg)
		}
	}
	if code, msg := rh.incrementalConfigs(resourceGroup, "g", false, "SET consumer.session.timeout.ms=50000"); code != 0 {
		t.Fatalf("group config: %d %s", code, msg)
	}
	all := []string{"GROUP_CONFIG:g", "CLIENT_METRICS:s1", "CLIENT_METRICS:s2", "BROKER_LOGGER:1", "BROKER_LOGGER:2", "BROKER_LOGGER:3", "BROKER:1", "BROKER:2", "BROKER:3", "TOPIC:t1", "TOPIC:t2"}
	for _, tc := range []struct {
		name    string
		version int16
		types   []int8
		code    int16
		want    []string
	}{
		{"v0", 0, nil, 0, []string{"CLIENT_METRICS:s1", "CLIENT_METRICS:s2"}},
		{"v1, every type", 1, nil, 0, all},
		{"v1, topics and groups", 1, []int8{resourceTopic, resourceGroup}, 0, []string{"GROUP_CONFIG:g", "TOPIC:t1", "TOPIC:t2"}},
		{"v1, client metrics", 1, []int8{resourceClientMetrics}, 0, []string{"CLIENT_METRICS:s1", "CLIENT_METRICS:s2"}},
		{"v1, broker loggers", 1, []int8{resourceBrokerLogger}, 0, []string{"BROKER_LOGGER:1", "BROKER_LOGGER:2", "BROKER_LOGGER:3"}},
		{"v1, brokers", 1, []int8{resourceBroker}, 0, []string{"BROKER:1", "BROKER:2", "BROKER:3"}},
		{"v1, an unknown type", 1, []int8{resourceTopic, 64}, kerr.UnsupportedVersion.Code, nil},
	} {
		code, rows := rh.listConfigResources(tc.version, "User:ANONYMOUS", tc.types...)
		if code != tc.code || !slices.Equal(rows, tc.want) {
			t.Errorf("%s: %d %v, want %d %v", tc.name, code, rows, tc.code, tc.want)
		}
	}
}

func TestListConfigResourcesAuthorization(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("t", nil, []int32{1})
	if code, rows := rh.listConfigResources(1, "User:mallory"); code != kerr.ClusterAuthorizationFailed.Code || len(rows) != 0 {
		t.Errorf("mallory: %d %v", code, rows)
	}
	grantClusterDescribeConfigs(t, rh, "User:alice")
	if code, rows := rh.listConfigResources(1, "User:alice", resourceTopic); code != 0 || !slices.Equal(rows, []string{"TOPIC:t"}) {
		t.Errorf("alice with DESCRIBE_CONFIGS on the cluster: %d %v", code, rows)
	}
}
