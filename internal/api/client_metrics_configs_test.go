package api

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeClientMetricsAs is DescribeConfigs v4 of subscription name as
// principal, with synonyms and documentation, for the named keys (all
// when none).
func (rh *replicaHarness) describeClientMetricsAs(principal, name string, keys ...string) kmsg.DescribeConfigsResponseResource {
	rh.t.Helper()
	r := kmsg.NewPtrDescribeConfigsRequest()
	r.IncludeSynonyms, r.IncludeDocumentation = true, true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = resourceClientMetrics, name, keys
	r.Resources = append(r.Resources, rr)
	return rh.handle(32, 4, r, principal).(*kmsg.DescribeConfigsResponse).Resources[0]
}

// alterClientMetrics is AlterConfigs v2 replacing the configs of
// subscription name with configs.
func (rh *replicaHarness) alterClientMetrics(name string, validateOnly bool, configs map[string]string) (int16, string) {
	rh.t.Helper()
	r := kmsg.NewPtrAlterConfigsRequest()
	r.ValidateOnly = validateOnly
	rr := kmsg.NewAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = resourceClientMetrics, name
	for k, v := range configs {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, &v
		rr.Configs = append(rr.Configs, c)
	}
	r.Resources = append(r.Resources, rr)
	res := rh.handle(33, 2, r, "User:ANONYMOUS").(*kmsg.AlterConfigsResponse).Resources[0]
	msg := ""
	if res.ErrorMessage != nil {
		msg = *res.ErrorMessage
	}
	return res.ErrorCode, msg
}

func (rh *replicaHarness) subscription(name string) map[string]string {
	return rh.meta.Image().ClientMetricsConfigs[name]
}

// Client metrics subscriptions (KIP-714's CLIENT_METRICS resource) are set
// with IncrementalAlterConfigs, validated as a whole as Kafka's controller
// validates them, and described as Kafka's ConfigHelper describes them:
// every config, a set one as CLIENT_METRICS_CONFIG, an unset one at its
// default.
func TestClientMetricsConfigs(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	if code, msg := rh.incrementalConfigs(resourceClientMetrics, "sub", false,
		"SET metrics=org.apache.kafka.producer. , org.apache.kafka.consumer.", "SET interval.ms=60000"); code != 0 {
		t.Fatalf("setting a subscription: %d %s", code, msg)
	}
	want := map[string]string{"metrics": "org.apache.kafka.producer. , org.apache.kafka.consumer.", "interval.ms": "60000"}
	if got := rh.subscription("sub"); !maps.Equal(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}

	res := rh.describeClientMetricsAs("User:ANONYMOUS", "sub")
	if res.ErrorCode != 0 || len(res.Configs) != 3 {
		t.Fatalf("described: error %d, %d configs", res.ErrorCode, len(res.Configs))
	}
	for i, w := range []struct {
		name, value string
		source      kmsg.ConfigSource
		typ         kmsg.ConfigType
	}{
		{"interval.ms", "60000", kmsg.ConfigSourceClientMetricsConfig, kmsg.ConfigTypeInt},
		{"match", "", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeList},
		{"metrics", "org.apache.kafka.producer.,org.apache.kafka.consumer.", kmsg.ConfigSourceClientMetricsConfig, kmsg.ConfigTypeList},
	} {
		c := res.Configs[i]
		if c.Name != w.name || c.Value == nil || *c.Value != w.value || c.Source != w.source || c.ConfigType != w.typ ||
			c.IsDefault != (w.source == kmsg.ConfigSourceDefaultConfig) || c.Documentation == nil || *c.Documentation == "" {
			t.Errorf("config %d: %+v, want %+v", i, c, w)
		}
		// Kafka gives a set config itself as its one synonym, an unset one none.
		if set := w.source == kmsg.ConfigSourceClientMetricsConfig; set != (len(c.ConfigSynonyms) == 1) || set && (c.ConfigSynonyms[0].Source != w.source || *c.ConfigSynonyms[0].Value != w.value) {
			t.Errorf("config %s: synonyms %+v", c.Name, c.ConfigSynonyms)
		}
	}
	if res := rh.describeClientMetricsAs("User:ANONYMOUS", "sub", "match"); len(res.Configs) != 1 || res.Configs[0].Name != "match" {
		t.Errorf("describing match alone: %+v", res.Configs)
	}
	if c, _ := rh.describeConfig(resourceClientMetrics, "none", "interval.ms"); c.Value == nil || *c.Value != "300000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("a name without a subscription described as %+v", c)
	}
	if res := rh.describeClientMetricsAs("User:ANONYMOUS", ""); res.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("describing an empty name: %d", res.ErrorCode)
	}

	for _, tc := range []struct {
		name    string
		ops     []string
		want    int16
		mention string
	}{
		{"an interval that is no number", []string{"SET interval.ms=often"}, kerr.InvalidConfig.Code, "interval.ms"},
		{"an interval out of range", []string{"SET interval.ms=50"}, kerr.InvalidRequest.Code, "interval.ms"},
		{"a match pattern that is not a regex", []string{"SET match=client_id=["}, kerr.InvalidConfig.Code, "client_id=["},
		{"a match on an unknown selector", []string{"SET match=client_rack=a"}, kerr.InvalidConfig.Code, "client_rack"},
		{"an unknown config", []string{"SET metrics.level=debug"}, kerr.InvalidRequest.Code, "metrics.level"},
		// Kafka's controller has no ConfigDef for CLIENT_METRICS, so no list.
		{"APPEND to metrics", []string{"APPEND metrics=org.apache.kafka.share."}, kerr.InvalidConfig.Code, "metrics"},
	} {
		code, msg := rh.incrementalConfigs(resourceClientMetrics, "sub", false, tc.ops...)
		if code != tc.want || !strings.Contains(msg, tc.mention) {
			t.Errorf("%s: %d %q, want %d naming %s", tc.name, code, msg, tc.want, tc.mention)
		}
	}
	if got := rh.subscription("sub"); !maps.Equal(got, want) {
		t.Fatalf("refused changes wrote %v", got)
	}
	if code, _ := rh.incrementalConfigs(resourceClientMetrics, "", false, "SET interval.ms=1000"); code != kerr.InvalidRequest.Code {
		t.Errorf("a subscription without a name: %d", code)
	}

	if code, msg := rh.incrementalConfigs(resourceClientMetrics, "sub", true, "SET interval.ms=1000"); code != 0 {
		t.Fatalf("validate_only: %d %s", code, msg)
	}
	if code, msg := rh.incrementalConfigs(resourceClientMetrics, "new", true, "SET interval.ms=1000"); code != 0 {
		t.Fatalf("validate_only of a new subscription: %d %s", code, msg)
	}
	if got := rh.subscription("sub"); !maps.Equal(got, want) || rh.subscription("new") != nil {
		t.Fatalf("validate_only wrote: sub %v, new %v", got, rh.subscription("new"))
	}

	if code, msg := rh.incrementalConfigs(resourceClientMetrics, "sub", false, "DELETE metrics"); code != 0 || rh.subscription("sub")["metrics"] != "" {
		t.Fatalf("deleting metrics: %d %s, left %v", code, msg, rh.subscription("sub"))
	}
	if code, msg := rh.incrementalConfigs(resourceClientMetrics, "sub", false, "DELETE interval.ms"); code != 0 {
		t.Fatalf("deleting the last config: %d %s", code, msg)
	}
	if _, ok := rh.meta.Image().ClientMetricsConfigs["sub"]; ok {
		t.Fatal("a subscription whose configs were all deleted is still there")
	}
}

// AlterConfigs replaces a subscription's whole set, validated the same
// way; an empty set removes it.
func TestClientMetricsAlterConfigs(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	if code, msg := rh.alterClientMetrics("s", false, map[string]string{"metrics": "*", "interval.ms": "1000"}); code != 0 {
		t.Fatalf("creating: %d %s", code, msg)
	}
	replaced := map[string]string{"match": "client_software_name=apache-kafka-java"}
	if code, msg := rh.alterClientMetrics("s", false, replaced); code != 0 {
		t.Fatalf("replacing: %d %s", code, msg)
	}
	if got := rh.subscription("s"); !maps.Equal(got, replaced) {
		t.Fatalf("after replacing: %v, want %v", got, replaced)
	}
	if code, msg := rh.alterClientMetrics("s", false, map[string]string{"interval.ms": "3600001"}); code != kerr.InvalidRequest.Code || !strings.Contains(msg, "interval.ms") {
		t.Errorf("an interval over an hour: %d %q", code, msg)
	}
	if code, _ := rh.alterClientMetrics("s", true, map[string]string{"interval.ms": "2000"}); code != 0 {
		t.Errorf("validate_only: %d", code)
	}
	if got := rh.subscription("s"); !maps.Equal(got, replaced) {
		t.Fatalf("a refused or validate_only alter wrote %v", got)
	}
	if code, _ := rh.alterClientMetrics("", false, map[string]string{"interval.ms": "2000"}); code != kerr.InvalidRequest.Code {
		t.Errorf("an empty name: %d", code)
	}
	if code, msg := rh.alterClientMetrics("s", false, nil); code != 0 {
		t.Fatalf("emptying: %d %s", code, msg)
	}
	if _, ok := rh.meta.Image().ClientMetricsConfigs["s"]; ok {
		t.Fatal("an emptied subscription is still there")
	}
}

// With an authorizer, CLIENT_METRICS resources need DESCRIBE_CONFIGS and
// ALTER_CONFIGS on the cluster, as in Kafka.
func TestClientMetricsConfigsAuthorization(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	alter := func(principal string) int16 {
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = resourceClientMetrics, "s"
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := "1000"
		c.Name, c.Value, c.Op = "interval.ms", &v, opSet
		rr.Configs = append(rr.Configs, c)
		r.Resources = append(r.Resources, rr)
		return rh.handle(44, 1, r, principal).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
	}
	if code := alter("User:mallory"); code != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("mallory's alter: %d, want CLUSTER_AUTHORIZATION_FAILED", code)
	}
	if rh.subscription("s") != nil {
		t.Fatal("a denied alter wrote")
	}
	if res := rh.describeClientMetricsAs("User:mallory", "s"); res.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(res.Configs) != 0 {
		t.Errorf("mallory's describe: %d with %d configs", res.ErrorCode, len(res.Configs))
	}
	if code := alter("User:admin"); code != 0 {
		t.Fatalf("admin's alter: %d", code)
	}
	grantClusterDescribeConfigs(t, rh, "User:alice")
	if res := rh.describeClientMetricsAs("User:alice", "s"); res.ErrorCode != 0 {
		t.Errorf("alice with DESCRIBE_CONFIGS on the cluster: %d", res.ErrorCode)
	}
	if code := alter("User:alice"); code != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("alice's alter without ALTER_CONFIGS: %d", code)
	}
}

func grantClusterDescribeConfigs(t *testing.T, rh *replicaHarness, principal string) {
	t.Helper()
	rh.allow(principal, kmsg.ACLResourceTypeCluster, "kafka-cluster", kmsg.ACLOperationDescribeConfigs)
}
