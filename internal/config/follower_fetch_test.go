package config

import "testing"

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
