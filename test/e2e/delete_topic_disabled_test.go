package e2e

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestDeleteTopicDisabled: with delete.topic.enable=false, DeleteTopics
// answers TOPIC_DELETION_DISABLED, as Kafka does, and the topic and its
// data stay.
func TestDeleteTopicDisabled(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "delete.topic.enable=false")
	adm := newAdmin(t, b.Addr)
	const topic = "undeletable"
	createTopic(t, adm, topic, 1, nil)
	resps, err := adm.DeleteTopics(testContext(t, clientDeliveryTimeout), topic)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := resps[topic]
	if !ok || !errors.Is(r.Err, kerr.TopicDeletionDisabled) {
		t.Fatalf("DeleteTopics with delete.topic.enable=false: %+v, want TOPIC_DELETION_DISABLED", r)
	}
	topics, err := adm.ListTopics(testContext(t, clientDeliveryTimeout))
	if err != nil || !topics.Has(topic) {
		t.Fatalf("after a refused delete, %s is gone from ListTopics (%v)", topic, err)
	}
}
