package config

import (
	"strings"
	"testing"
)

// follower.fetch.last.tiered.offset.enable (KIP-1023) is a Boolean, off
// by default, under Kafka's name.
func TestFollowerFetchLastTieredOffset(t *testing.T) {
	if b := mustLoad(t, "", nil, nil); b.FollowerFetchLastTieredOffset {
		t.Error("follower.fetch.last.tiered.offset.enable is on by default")
	}
	b := mustLoad(t, "", nil, map[string]string{"follower.fetch.last.tiered.offset.enable": "true"})
	if !b.FollowerFetchLastTieredOffset {
		t.Error("follower.fetch.last.tiered.offset.enable=true did not turn it on")
	}
	if _, err := LoadBroker("", nil, map[string]string{"follower.fetch.last.tiered.offset.enable": "maybe"}); err == nil {
		t.Error("a value that is not a Boolean was accepted")
	}
}

// replica.selector.class (KIP-392) is unset by default, takes Kafka's
// RackAwareReplicaSelector and refuses any other class by name.
func TestReplicaSelectorClass(t *testing.T) {
	if b := mustLoad(t, "", nil, nil); b.RackAwareReplicaSelector {
		t.Error("the rack-aware selector is on by default")
	}
	b := mustLoad(t, "", nil, map[string]string{"replica.selector.class": RackAwareReplicaSelector})
	if !b.RackAwareReplicaSelector {
		t.Error("replica.selector.class=RackAwareReplicaSelector did not turn it on")
	}
	_, err := LoadBroker("", nil, map[string]string{"replica.selector.class": "com.example.MySelector"})
	if err == nil || !strings.Contains(err.Error(), "replica.selector.class") || !strings.Contains(err.Error(), RackAwareReplicaSelector) {
		t.Errorf("an unknown selector: %v; want an error naming the key and the allowed class", err)
	}
}
