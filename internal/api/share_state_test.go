package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A share-state request names one topic of one partition; any other shape
// is INVALID_REQUEST, not a panic (an empty first topic followed by one
// partition of a second crashed the broker).
func TestShareStateTargetNeedsOneTopicOfOnePartition(t *testing.T) {
	id := [16]byte{7}
	topic := func(partitions ...int32) kmsg.DeleteShareGroupStateRequestTopic {
		t := kmsg.NewDeleteShareGroupStateRequestTopic()
		t.TopicID = id
		for _, p := range partitions {
			tp := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
			tp.Partition = p
			t.Partitions = append(t.Partitions, tp)
		}
		return t
	}
	for _, tc := range []struct {
		name   string
		topics []kmsg.DeleteShareGroupStateRequestTopic
		ok     bool
	}{
		{"one topic, one partition", []kmsg.DeleteShareGroupStateRequestTopic{topic(3)}, true},
		{"no topic", nil, false},
		{"a topic without partitions", []kmsg.DeleteShareGroupStateRequestTopic{topic()}, false},
		{"an empty topic, then one partition", []kmsg.DeleteShareGroupStateRequestTopic{topic(), topic(3)}, false},
		{"two partitions", []kmsg.DeleteShareGroupStateRequestTopic{topic(3, 4)}, false},
		{"two topics", []kmsg.DeleteShareGroupStateRequestTopic{topic(3), topic(4)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := kmsg.NewPtrDeleteShareGroupStateRequest()
			req.Topics = tc.topics
			gotID, gotPartition, ok := shareStateTarget(req)
			if ok != tc.ok || (ok && (gotID != id || gotPartition != 3)) {
				t.Fatalf("got %v %d %v, want ok %v (topic %v partition 3)", gotID, gotPartition, ok, tc.ok, id)
			}
		})
	}
	for _, req := range []kmsg.Request{kmsg.NewPtrInitializeShareGroupStateRequest(), kmsg.NewPtrReadShareGroupStateRequest(),
		kmsg.NewPtrWriteShareGroupStateRequest(), kmsg.NewPtrReadShareGroupStateSummaryRequest()} {
		if _, _, ok := shareStateTarget(req); ok {
			t.Errorf("%T without topics names a share-partition", req)
		}
	}
}
