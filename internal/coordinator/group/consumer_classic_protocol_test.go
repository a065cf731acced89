package group

import (
	"bytes"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

func TestReadSubscription(t *testing.T) {
	v3 := kmsg.NewConsumerMemberMetadata()
	v3.Version, v3.Topics, v3.Rack = 3, []string{"t1", "t2"}, ptr("r1")
	v3.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "t1", Partitions: []int32{2, 0}}, {Topic: "gone", Partitions: []int32{1}}}
	// kafka-go: version 1, the fields of version 0 only.
	kafkaGo := []byte{0, 1, 0, 0, 0, 1, 0, 2, 't', '1', 0, 0, 0, 0}
	for _, tc := range []struct {
		name    string
		raw     []byte
		ok      bool
		version int16
		topics  []string
		owned   assignor.Assignment
	}{
		{"v3", v3.AppendTo(nil), true, 3, []string{"t1", "t2"}, tps(cgT1, 0, 2)},
		{"v0", consumerMeta("t1"), true, 0, []string{"t1"}, assignor.Assignment{}},
		{"kafka-go's v1 without owned partitions", kafkaGo, true, 1, []string{"t1"}, assignor.Assignment{}},
		{"truncated", v3.AppendTo(nil)[:5], false, 0, nil, nil},
		{"empty", nil, false, 0, nil, nil},
		{"one byte", []byte{0}, false, 0, nil, nil},
	} {
		meta, err := readSubscription(tc.raw)
		if (err == nil) != tc.ok {
			t.Fatalf("%s: error %v, want ok %v", tc.name, err, tc.ok)
		}
		if !tc.ok {
			continue
		}
		if owned := ownedOf(meta, harnessTopics); meta.Version != tc.version || !slices.Equal(meta.Topics, tc.topics) || !owned.Equal(tc.owned) {
			t.Fatalf("%s: version %d, topics %v, owned %v", tc.name, meta.Version, meta.Topics, owned)
		}
	}
}

// An assignment goes out by topic name in the member's subscription
// version (at most 3), and reads back the same; reading drops topics that
// do not exist and partitions out of range, and an empty one holds
// nothing.
func TestClassicAssignmentRoundTrip(t *testing.T) {
	a := assignor.Assignment{cgT2: {1}, cgT1: {0, 3}, base.TopicID{0xee}: {0}}
	for _, tc := range []struct {
		subscription []byte
		version      int16
	}{{consumerMeta("t1"), 0}, {classicSubscription(nil), 3}, {[]byte{0, 9}, 3}, {nil, 0}} {
		raw := classicAssignment(a, harnessTopics, tc.subscription)
		var out kmsg.ConsumerMemberAssignment
		if err := out.ReadFrom(raw); err != nil || out.Version != tc.version || len(out.Topics) != 2 || out.Topics[0].Topic != "t1" {
			t.Fatalf("subscription %x: assignment %+v (%v)", tc.subscription, out, err)
		}
		back, err := readClassicAssignment(raw, harnessTopics)
		if want := (assignor.Assignment{cgT1: {0, 3}, cgT2: {1}}); err != nil || !back.Equal(want) {
			t.Fatalf("read back %v (%v), want %v", back, err, want)
		}
	}
	odd := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t1", Partitions: []int32{-1, 1, 4}}, {Topic: "gone", Partitions: []int32{0}}}}
	if got, err := readClassicAssignment(odd.AppendTo(nil), harnessTopics); err != nil || !got.Equal(tps(cgT1, 1)) {
		t.Fatalf("out-of-range partitions: %v (%v)", got, err)
	}
	if got, err := readClassicAssignment(nil, harnessTopics); err != nil || got.Size() != 0 {
		t.Fatalf("empty assignment: %v (%v)", got, err)
	}
	if _, err := readClassicAssignment([]byte("a-member"), harnessTopics); err == nil {
		t.Fatal("bytes that are no assignment read as one")
	}
	if !bytes.Equal(classicAssignment(assignor.Assignment{}, harnessTopics, nil), (&kmsg.ConsumerMemberAssignment{}).AppendTo(nil)) {
		t.Fatal("an empty assignment is not written as one")
	}
}
