package broker

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// TestTierStateFinishedSegments: a follower rebuilding from the remote
// tier sees only the partition's COPY_FINISHED segments, not a copy in
// progress.
func TestTierStateFinishedSegments(t *testing.T) {
	f := newOrphanFixture(t)
	live := f.meta.Image().Topics["live"]
	s := TierState{Meta: f.meta}
	for _, tc := range []struct {
		partition int32
		want      int
	}{{0, 1}, {1, 0}} {
		segs, ok := s.FinishedSegments(live.ID, base.TopicPartition{Topic: "live", Partition: tc.partition})
		if !ok || len(segs) != tc.want {
			t.Errorf("live-%d: %d segments (%v), want %d", tc.partition, len(segs), ok, tc.want)
		}
	}
}
