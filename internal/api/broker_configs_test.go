package api

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// incrementalBrokerConfigs sends one IncrementalAlterConfigs for broker
// resource name with ops ("SET k=v", "DELETE k", "APPEND k=v",
// "SUBTRACT k=v") and returns its code and message.
func (rh *replicaHarness) incrementalBrokerConfigs(name string, validateOnly bool, ops ...string) (int16, string) {
	rh.t.Helper()
	return rh.incrementalConfigs(resourceBroker, name, validateOnly, ops...)
}

// incrementalConfigs is incrementalBrokerConfigs for any resource type.
func (rh *replicaHarness) incrementalConfigs(resType kmsg.ConfigResourceType, name string, validateOnly bool, ops ...string) (int16, string) {
	rh.t.Helper()
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r.ValidateOnly = validateOnly
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = resType, name
	for _, op := range ops {
		verb, kv, _ := strings.Cut(op, " ")
		k, v, hasValue := strings.Cut(kv, "=")
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name = k
		if hasValue {
			c.Value = &v
		}
		c.Op = map[string]kmsg.IncrementalAlterConfigOp{"SET": opSet, "DELETE": opDelete, "APPEND": opAppend, "SUBTRACT": opSubtract}[verb]
		rr.Configs = append(rr.Configs, c)
	}
	r.Resources = append(r.Resources, rr)
	resp := rh.handle(44, 1, r, "User:ANONYMOUS").(*kmsg.IncrementalAlterConfigsResponse)
	msg := ""
	if m := resp.Resources[0].ErrorMessage; m != nil {
		msg = *m
	}
	return resp.Resources[0].ErrorCode, msg
}

// alterConfigsLegacy sends one AlterConfigs v2 (the whole set) of a
// resource and returns its answer.
func (rh *replicaHarness) alterConfigsLegacy(resType kmsg.ConfigResourceType, name string, configs ...kmsg.AlterConfigsRequestResourceConfig) kmsg.AlterConfigsResponseResource {
	rh.t.Helper()
	r := kmsg.NewPtrAlterConfigsRequest()
	rr := kmsg.NewAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = resType, name, configs
	r.Resources = append(r.Resources, rr)
	return rh.handle(33, 2, r, "User:ANONYMOUS").(*kmsg.AlterConfigsResponse).Resources[0]
}

// legacyEntry is one config of an AlterConfigs resource; without a value,
// its value is null.
func legacyEntry(name string, value ...string) kmsg.AlterConfigsRequestResourceConfig {
	c := kmsg.NewAlterConfigsRequestResourceConfig()
	c.Name = name
	if len(value) > 0 {
		c.Value = &value[0]
	}
	return c
}

// describeConfig is config key of a resource as DescribeConfigs v4 answers
// it (ok false when it is not listed).
func (rh *replicaHarness) describeConfig(resType kmsg.ConfigResourceType, name, key string) (kmsg.DescribeConfigsResponseResourceConfig, bool) {
	rh.t.Helper()
	r := kmsg.NewPtrDescribeConfigsRequest()
	r.IncludeSynonyms = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = resType, name
	r.Resources = append(r.Resources, rr)
	resp := rh.handle(32, 4, r, "User:ANONYMOUS").(*kmsg.DescribeConfigsResponse)
	if code := resp.Resources[0].ErrorCode; code != 0 {
		rh.t.Fatalf("describe %d %q: error %d", resType, name, code)
	}
	for _, c := range resp.Resources[0].Configs {
		if c.Name == key {
			return c, true
		}
	}
	return kmsg.DescribeConfigsResponseResourceConfig{}, false
}

// Dynamic broker configs through IncrementalAlterConfigs: the cluster-wide
// default and this broker's own land in the image, win in that order over
// server.properties, and describe with Kafka's sources; validate_only
// stores nothing; a static, unknown or bad key, another broker's resource
// and a default that would break a topic are refused.
func TestDynamicBrokerConfigs(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{"log.retention.ms": "1000"})
	rh.createTopic("plain", nil, []int32{1})

	if code, msg := rh.incrementalBrokerConfigs("", true, "SET log.retention.ms=2000"); code != 0 {
		t.Fatalf("validate only: %d %s", code, msg)
	}
	if len(rh.meta.Image().BrokerConfigs) != 0 {
		t.Fatalf("validate_only stored %v", rh.meta.Image().BrokerConfigs)
	}
	if code, msg := rh.incrementalBrokerConfigs("", false, "SET log.retention.ms=2000", "APPEND log.cleanup.policy=compact"); code != 0 {
		t.Fatalf("cluster-wide: %d %s", code, msg)
	}
	if got, want := rh.meta.Image().BrokerConfigs, map[string]string{"log.retention.ms": "2000", "log.cleanup.policy": "delete,compact"}; !maps.Equal(got, want) {
		t.Fatalf("cluster-wide configs %v, want %v", got, want)
	}
	c, _ := rh.describeConfig(resourceTopic, "plain", "retention.ms")
	if *c.Value != "2000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("topic retention.ms = %s from %v, want 2000 from the cluster-wide default", *c.Value, c.Source)
	}

	if code, msg := rh.incrementalBrokerConfigs("1", false, "SET log.retention.ms=3000"); code != 0 {
		t.Fatalf("this broker's: %d %s", code, msg)
	}
	c, _ = rh.describeConfig(resourceBroker, "1", "log.retention.ms")
	if *c.Value != "3000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig || c.ReadOnly || len(c.ConfigSynonyms) != 4 {
		t.Errorf("broker log.retention.ms = %s from %v read-only %v, %d synonyms; want 3000 from DYNAMIC_BROKER_CONFIG, writable, 4 synonyms",
			*c.Value, c.Source, c.ReadOnly, len(c.ConfigSynonyms))
	}
	c, _ = rh.describeConfig(resourceBroker, "", "log.retention.ms")
	if *c.Value != "2000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("default resource log.retention.ms = %s from %v, want 2000 from DYNAMIC_DEFAULT_BROKER_CONFIG", *c.Value, c.Source)
	}
	if _, listed := rh.describeConfig(resourceBroker, "", "num.partitions"); listed {
		t.Error("the default resource lists num.partitions, which it does not set")
	}
	c, _ = rh.describeConfig(resourceTopic, "plain", "retention.ms")
	if *c.Value != "3000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("topic retention.ms = %s from %v, want 3000 from this broker's", *c.Value, c.Source)
	}
	if code, msg := rh.incrementalBrokerConfigs("1", false, "DELETE log.retention.ms"); code != 0 || len(rh.meta.Image().NodeConfigs) != 0 {
		t.Fatalf("delete this broker's only key: %d %s, node configs %v", code, msg, rh.meta.Image().NodeConfigs)
	}

	refusals := []struct {
		name     string
		resource string
		ops      []string
		code     int16
		says     string
	}{
		{"static keys", "", []string{"SET num.partitions=3", "SET log.dirs=/x"}, kerr.InvalidRequest.Code,
			"Cannot update these configs dynamically: [log.dirs, num.partitions]"},
		{"unknown key", "", []string{"SET log.retention.weeks=1"}, kerr.InvalidConfig.Code, "unknown broker config"},
		{"bad value", "1", []string{"SET log.segment.bytes=12"}, kerr.InvalidConfig.Code, "log.segment.bytes"},
		{"another broker", "2", []string{"SET log.retention.ms=1"}, kerr.InvalidRequest.Code, "not this broker"},
		{"not a broker id", "x", []string{"SET log.retention.ms=1"}, kerr.InvalidRequest.Code, "not this broker"},
		{"append to a scalar", "", []string{"APPEND log.retention.ms=1"}, kerr.InvalidConfig.Code, "list configs"},
	}
	for _, tt := range refusals {
		before := rh.meta.Image().Version
		code, msg := rh.incrementalBrokerConfigs(tt.resource, false, tt.ops...)
		if code != tt.code || !strings.Contains(msg, tt.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tt.name, code, msg, tt.code, tt.says)
		}
		if rh.meta.Image().Version != before {
			t.Errorf("%s: the image changed", tt.name)
		}
	}
}

// A default that would leave a topic with an invalid config is refused,
// naming the topic: a tiered topic cannot be compacted, and its local
// retention cannot pass its total one.
func TestDynamicBrokerConfigsKeepTopicsValid(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{"remote.log.storage.system.enable": "true"})
	rh.createTopic("limited", map[string]string{"remote.storage.enable": "true", "local.retention.ms": "5000"}, []int32{1})
	for _, ops := range [][]string{
		{"SET log.retention.ms=1000"},
		{"SET log.cleanup.policy=compact"},
		{"APPEND log.cleanup.policy=compact"},
	} {
		code, msg := rh.incrementalBrokerConfigs("", false, ops...)
		if code != kerr.InvalidConfig.Code || !strings.Contains(msg, "topic limited") {
			t.Errorf("%v: %d %q, want INVALID_CONFIG naming topic limited", ops, code, msg)
		}
	}
	rh.createTopic("following", map[string]string{"remote.storage.enable": "true", "retention.ms": "10000"}, []int32{1})
	code, msg := rh.incrementalBrokerConfigs("1", false, "SET log.local.retention.ms=-1")
	if code != kerr.InvalidConfig.Code || !strings.Contains(msg, "topic following") {
		t.Errorf("this broker's unlimited local retention: %d %q, want INVALID_CONFIG naming topic following", code, msg)
	}
	if img := rh.meta.Image(); len(img.BrokerConfigs) != 0 || len(img.NodeConfigs) != 0 {
		t.Fatalf("refused changes stored %v, %v", img.BrokerConfigs, img.NodeConfigs)
	}
}

// AlterConfigs replaces the resource's whole set; a null value removes.
func TestAlterConfigsReplacesBrokerResource(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	if code, msg := rh.incrementalBrokerConfigs("", false, "SET log.retention.ms=2000", "SET log.segment.bytes=4096"); code != 0 {
		t.Fatalf("%d %s", code, msg)
	}
	if code := rh.alterConfigsLegacy(resourceBroker, "", legacyEntry("log.roll.ms", "60000")).ErrorCode; code != 0 {
		t.Fatalf("AlterConfigs: %d", code)
	}
	if got, want := rh.meta.Image().BrokerConfigs, map[string]string{"log.roll.ms": "60000"}; !maps.Equal(got, want) {
		t.Fatalf("cluster-wide configs %v, want %v", got, want)
	}
}

// The connection limits are dynamic: set on either broker resource and
// described as dynamic, but a set that leaves max.connections.per.ip=0
// without overrides (every connection refused) is INVALID_CONFIG, checked
// against what the other layers hold.
func TestDynamicConnectionLimits(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	if code, msg := rh.incrementalBrokerConfigs("", false, "SET max.connections=500", "SET max.connections.per.ip.overrides=10.0.0.1:5"); code != 0 {
		t.Fatalf("cluster-wide max.connections: %d %q", code, msg)
	}
	c, ok := rh.describeConfig(resourceBroker, "1", "max.connections")
	if !ok || c.Value == nil || *c.Value != "500" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || c.ReadOnly {
		t.Fatalf("max.connections described as %+v", c)
	}
	if code, msg := rh.incrementalBrokerConfigs("1", false, "SET max.connections.per.ip=0"); code != 0 {
		t.Fatalf("per-IP 0 with cluster-wide overrides: %d %q", code, msg)
	}
	code, msg := rh.incrementalBrokerConfigs("", false, "DELETE max.connections.per.ip.overrides")
	if code != kerr.InvalidConfig.Code || !strings.Contains(msg, "max.connections.per.ip") {
		t.Fatalf("removing the overrides under per-IP 0: %d %q, want INVALID_CONFIG", code, msg)
	}
	if got := rh.meta.Image().BrokerConfigs["max.connections.per.ip.overrides"]; got != "10.0.0.1:5" {
		t.Fatalf("the refused change left overrides %q", got)
	}
}

// The log cleaner's settings are dynamic on either resource; a change of
// its threads outside half to double the threads running is
// INVALID_CONFIG, as Kafka's LogCleaner refuses it, and changes nothing.
func TestDynamicCleanerSettings(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	if code, msg := rh.incrementalBrokerConfigs("", false, "SET log.cleaner.threads=2", "SET log.cleaner.io.max.bytes.per.second=1048576"); code != 0 {
		t.Fatalf("cluster-wide cleaner settings: %d %q", code, msg)
	}
	c, ok := rh.describeConfig(resourceBroker, "1", "log.cleaner.io.max.bytes.per.second")
	if !ok || c.Value == nil || *c.Value != "1048576" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || c.ReadOnly {
		t.Fatalf("log.cleaner.io.max.bytes.per.second described as %+v", c)
	}
	code, msg := rh.incrementalBrokerConfigs("1", false, "SET log.cleaner.threads=5")
	if code != kerr.InvalidConfig.Code || !strings.Contains(msg, "more than double the current value 2") {
		t.Fatalf("5 cleaner threads over 2: %d %q, want INVALID_CONFIG", code, msg)
	}
	if _, set := rh.meta.Image().NodeConfigs[1]["log.cleaner.threads"]; set {
		t.Fatal("the refused change was stored")
	}
	if code, msg := rh.incrementalBrokerConfigs("1", false, "SET log.cleaner.threads=4"); code != 0 {
		t.Fatalf("4 cleaner threads over 2: %d %q", code, msg)
	}
}
