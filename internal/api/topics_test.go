package api

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCollidingTopic(t *testing.T) {
	existing := map[string]struct{}{"a_b": {}, "c.d": {}, "plain": {}, "x.y_z": {}}
	tests := []struct {
		name, collides string
	}{
		{"a.b", "a_b"},
		{"c_d", "c.d"},
		{"x_y.z", "x.y_z"},
		{"x_y_z", "x.y_z"},
		{"a_b", ""}, // itself: TOPIC_ALREADY_EXISTS, not a collision
		{"plain", ""},
		{"a-b", ""},
		{"ab", ""},
		{"c.d.e", ""},
	}
	for _, tt := range tests {
		got, ok := collidingTopic(tt.name, existing)
		if ok != (tt.collides != "") || got != tt.collides {
			t.Errorf("%s: collides with %q (%v), want %q", tt.name, got, ok, tt.collides)
		}
	}
}

// CreateTopics refuses a name that differs from an existing topic's only
// in '.' against '_', as Kafka does.
func TestCreateTopicCollidingName(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("metrics_in", nil, []int32{1})
	r := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "metrics.in", 1, 1
	r.Topics = append(r.Topics, rt)
	resp := rh.handle(19, 7, r, "User:ANONYMOUS").(*kmsg.CreateTopicsResponse)
	if got := resp.Topics[0]; got.ErrorCode != kerr.InvalidTopicException.Code || got.ErrorMessage == nil {
		t.Fatalf("metrics.in next to metrics_in: code %d, want INVALID_TOPIC_EXCEPTION with a message", got.ErrorCode)
	}
	if _, exists := rh.meta.Image().Topics["metrics.in"]; exists {
		t.Fatal("the colliding topic was created")
	}
}

// CreateTopics refuses __cluster_metadata, the metadata quorum's log, as
// Kafka does, validate_only or not; Metadata does not auto-create it.
func TestCreateTopicsRefusesTheQuorumTopic(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	for _, validateOnly := range []bool{true, false} {
		r := kmsg.NewPtrCreateTopicsRequest()
		r.ValidateOnly = validateOnly
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = quorumTopic, 1, 1
		r.Topics = append(r.Topics, rt)
		got := rh.handle(19, 7, r, "User:ANONYMOUS").(*kmsg.CreateTopicsResponse).Topics[0]
		if got.ErrorCode != kerr.InvalidRequest.Code || got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, "__cluster_metadata is prohibited") {
			t.Errorf("CreateTopics of %s (validate only %v): %d %v, want INVALID_REQUEST", quorumTopic, validateOnly, got.ErrorCode, got.ErrorMessage)
		}
	}
	m := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(quorumTopic)
	m.Topics = append(m.Topics, mt)
	m.AllowAutoTopicCreation = true
	if got := rh.handle(3, 12, m, "User:ANONYMOUS").(*kmsg.MetadataResponse).Topics[0]; got.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("Metadata of %s with auto-creation: %d, want INVALID_REQUEST", quorumTopic, got.ErrorCode)
	}
	if _, exists := rh.meta.Image().Topics[quorumTopic]; exists {
		t.Fatal("the quorum's topic was created")
	}
}
