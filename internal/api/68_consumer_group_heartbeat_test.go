package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer group protocol's APIs are advertised at v0-1 unless
// group.coordinator.rebalance.protocols leaves "consumer" out; then they
// are neither advertised nor served.
func TestConsumerGroupAPIsFollowTheProtocolsConfig(t *testing.T) {
	checkAdvertised(t, kmsg.ConsumerGroupHeartbeat.Int16(), 0, 1)
	checkAdvertised(t, kmsg.ConsumerGroupDescribe.Int16(), 0, 1)

	rh := newReplicaHarness(t, map[string]string{"group.coordinator.rebalance.protocols": "classic"})
	resp := rh.handle(18, 3, kmsg.NewPtrApiVersionsRequest(), "User:ANONYMOUS").(*kmsg.ApiVersionsResponse)
	for _, k := range resp.ApiKeys {
		if k.ApiKey == kmsg.ConsumerGroupHeartbeat.Int16() || k.ApiKey == kmsg.ConsumerGroupDescribe.Int16() {
			t.Fatalf("ApiVersions advertises %s with the consumer protocol off", kmsg.NameForKey(k.ApiKey))
		}
	}
	if rh.h.Supported(kmsg.ConsumerGroupHeartbeat.Int16(), 1) || !rh.h.Supported(kmsg.JoinGroup.Int16(), 9) {
		t.Fatal("with the consumer protocol off, ConsumerGroupHeartbeat is served or JoinGroup is not")
	}
}
