package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Regression: TxnOffsetCommit appended its refused partitions as a second
// entry of a topic the coordinator also answered, and clients index the
// response by topic name.
func TestMergeByTopicKeepsOneEntryPerTopic(t *testing.T) {
	part := func(p int32, code int16) kmsg.TxnOffsetCommitResponseTopicPartition {
		sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
		sp.Partition, sp.ErrorCode = p, code
		return sp
	}
	answered := []kmsg.TxnOffsetCommitResponseTopic{{Topic: "a", Partitions: []kmsg.TxnOffsetCommitResponseTopicPartition{part(0, 0)}}}
	refused := []kmsg.TxnOffsetCommitResponseTopic{
		{Topic: "a", Partitions: []kmsg.TxnOffsetCommitResponseTopicPartition{part(7, 3)}},
		{Topic: "gone", Partitions: []kmsg.TxnOffsetCommitResponseTopicPartition{part(0, 3)}},
	}
	got := mergeByTopic(answered, refused,
		func(t *kmsg.TxnOffsetCommitResponseTopic) string { return t.Topic },
		func(t *kmsg.TxnOffsetCommitResponseTopic) *[]kmsg.TxnOffsetCommitResponseTopicPartition {
			return &t.Partitions
		})
	var names []string
	for _, rt := range got {
		names = append(names, rt.Topic)
	}
	if !slices.Equal(names, []string{"a", "gone"}) {
		t.Fatalf("topics %v, want a once, then gone", names)
	}
	if ps := got[0].Partitions; len(ps) != 2 || ps[0].Partition != 0 || ps[1].Partition != 7 || ps[1].ErrorCode != 3 {
		t.Fatalf("topic a answers %+v, want partition 0 then the refused 7", ps)
	}
}
