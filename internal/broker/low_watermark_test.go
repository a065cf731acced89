package broker

import (
	"errors"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
)

// TestLowWatermark: a partition led here alone answers its log start; one
// with followers, the least log start among its live replicas, unknown
// (-1) while a live follower has not fetched in this term, a fenced one
// not counted; a partition replaced since (a restart) is not led.
func TestLowWatermark(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("lw", []int32{1, 2, 3}, []int32{1})
	led, alone := base.TopicPartition{Topic: "lw", Partition: 0}, base.TopicPartition{Topic: "lw", Partition: 1}
	if lw, err := f.b.LowWatermark(f.hosted(alone)); err != nil || lw != 0 {
		t.Fatalf("a partition led alone: %d, %v; want its log start, 0", lw, err)
	}
	p := f.hosted(led)
	appendRecords(t, p, 3)
	f.mustFetch(led, 2, 3, 0)
	if lw, err := f.b.LowWatermark(p); err != nil || lw != -1 {
		t.Fatalf("live follower 3 has not fetched: %d, %v; want -1", lw, err)
	}
	f.fence(3)
	if lw, err := f.b.LowWatermark(p); err != nil || lw != 0 {
		t.Fatalf("3 fenced: %d, %v; want 0", lw, err)
	}
	f.restart()
	if _, err := f.b.LowWatermark(p); !errors.Is(err, partition.ErrNotLeader) {
		t.Fatalf("the partition closed by a restart: %v, want ErrNotLeader", err)
	}
}
