package api

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A consumer group's configs (KIP-848's GROUP resource) are set with
// IncrementalAlterConfigs, checked against the broker's bounds, described
// with their source, and reach the group coordinator's view; AlterConfigs
// does not change them, as in Kafka.
func TestGroupConfigs(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	settings := GroupConsumerSettings(rh.meta, rh.h.opts.Config)
	if _, _, ok := settings("g"); ok {
		t.Fatal("a group without configs has settings of its own")
	}
	if code, msg := rh.incrementalConfigs(resourceGroup, "g", false, "SET consumer.session.timeout.ms=50000", "SET consumer.heartbeat.interval.ms=6000"); code != 0 {
		t.Fatalf("setting group configs: %d %s", code, msg)
	}
	if session, heartbeat, ok := settings("g"); !ok || session != 50*time.Second || heartbeat != 6*time.Second {
		t.Fatalf("the coordinator sees %v, %v, %v", session, heartbeat, ok)
	}
	c, ok := rh.describeConfig(resourceGroup, "g", "consumer.session.timeout.ms")
	if !ok || c.Value == nil || *c.Value != "50000" || c.Source != kmsg.ConfigSourceGroupConfig {
		t.Fatalf("described %+v", c)
	}
	if c, _ := rh.describeConfig(resourceGroup, "other", "consumer.heartbeat.interval.ms"); c.Value == nil || *c.Value != "5000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("a group without configs described as %+v", c)
	}

	for _, tc := range []struct {
		name string
		ops  []string
		want int16
	}{
		{"a session over the bound", []string{"SET consumer.session.timeout.ms=70000"}, kerr.InvalidConfig.Code},
		{"a heartbeat under the bound", []string{"SET consumer.heartbeat.interval.ms=10"}, kerr.InvalidConfig.Code},
		{"an unknown key", []string{"SET share.record.lock.duration.ms=1"}, kerr.InvalidConfig.Code},
	} {
		if code, msg := rh.incrementalConfigs(resourceGroup, "g", false, tc.ops...); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, msg, tc.want)
		}
	}
	if code, _ := rh.incrementalConfigs(resourceGroup, "", false, "SET consumer.session.timeout.ms=50000"); code != kerr.InvalidRequest.Code {
		t.Errorf("a group resource without a name: %d", code)
	}

	alter := kmsg.NewPtrAlterConfigsRequest()
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = resourceGroup, "g"
	alter.Resources = append(alter.Resources, ar)
	if code := rh.handle(33, 2, alter, "User:ANONYMOUS").(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode; code != kerr.InvalidRequest.Code {
		t.Errorf("AlterConfigs of a group: %d, want INVALID_REQUEST", code)
	}

	if code, msg := rh.incrementalConfigs(resourceGroup, "g", false, "DELETE consumer.session.timeout.ms", "DELETE consumer.heartbeat.interval.ms"); code != 0 {
		t.Fatalf("deleting group configs: %d %s", code, msg)
	}
	if _, ok := rh.meta.Image().GroupConfigs["g"]; ok {
		t.Fatal("a group whose configs were all deleted keeps an entry")
	}
}
