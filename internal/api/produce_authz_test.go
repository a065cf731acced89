package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceNeedsWrite: with an authorizer, a principal that may read a
// topic (and so see it in Metadata) but not WRITE it is refused with
// TOPIC_AUTHORIZATION_FAILED and nothing is appended; WRITE lets the same
// produce through. Real clients rarely reach this check: without DESCRIBE
// they stop at Metadata, which is what the end-to-end ACL tests see.
func TestProduceNeedsWrite(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("ledger", nil, []int32{1})
	produce := func() int16 {
		r := kmsg.NewPtrProduceRequest()
		r.Acks, r.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "ledger"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = oneRecordBatch("entry")
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return rh.handle(0, 9, r, "User:alice").(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}

	rh.allow("User:alice", kmsg.ACLResourceTypeTopic, "ledger", kmsg.ACLOperationRead)
	if code := produce(); code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("a produce with READ only: error %d, want TOPIC_AUTHORIZATION_FAILED", code)
	}
	if end := rh.partition("ledger", 0).Offsets().LogEnd; end != 0 {
		t.Fatalf("the refused produce was appended: log end %d", end)
	}
	rh.allow("User:alice", kmsg.ACLResourceTypeTopic, "ledger", kmsg.ACLOperationWrite)
	if code := produce(); code != 0 {
		t.Fatalf("a produce with WRITE: error %d", code)
	}
}
