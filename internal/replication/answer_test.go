package replication

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
)

func TestDecide(t *testing.T) {
	lineage := []base.EpochStart{{Epoch: 1, Start: 0}, {Epoch: 3, Start: 50}}
	follower := FollowerState{Lineage: lineage, LogEnd: 80, HighWatermark: 40}
	for name, tc := range map[string]struct {
		answer Answer
		step   Step
		cut    Truncation
	}{
		"records":      {Answer{}, StepAppend, Truncation{}},
		"out of range": {Answer{Err: kerr.OffsetOutOfRange}, StepOutOfRange, Truncation{}},
		"in the tier":  {Answer{Err: kerr.OffsetMovedToTieredStorage}, StepFromTier, Truncation{}},
		"not leader":   {Answer{Err: kerr.NotLeaderForPartition}, StepBackoff, Truncation{}},
		"fenced epoch": {Answer{Err: kerr.FencedLeaderEpoch}, StepBackoff, Truncation{}},
		"unknown id":   {Answer{Err: kerr.UnknownTopicID}, StepBackoff, Truncation{}},
		// The leader's epoch 3 ends at 60: the follower's 60..80 diverge.
		"diverging same epoch": {Answer{Diverging: &EpochEnd{Epoch: 3, End: 60}}, StepTruncate, Truncation{Offset: 60, Completed: true}},
		// The leader never had epoch 3; its epoch 2 ends at 45: the follower
		// knows no epoch 2, so it steps back to the end of its epoch 1 (50)
		// and asks again.
		"diverging older epoch": {Answer{Diverging: &EpochEnd{Epoch: 2, End: 45}}, StepTruncate, Truncation{Offset: 50, Completed: false}},
	} {
		step, cut := Decide(tc.answer, follower)
		if step != tc.step || cut != tc.cut {
			t.Errorf("%s: Decide = %v, %+v; want %v, %+v", name, step, cut, tc.step, tc.cut)
		}
	}
}

func TestOutOfRangeReset(t *testing.T) {
	for name, tc := range map[string]struct {
		followerEnd, leaderEnd, leaderStart int64
		to                                  int64
		startOver, changed                  bool
	}{
		"leader ends below the follower":  {followerEnd: 100, leaderEnd: 80, leaderStart: 0, to: 80, changed: true},
		"leader starts past the follower": {followerEnd: 100, leaderEnd: 500, leaderStart: 300, to: 300, startOver: true, changed: true},
		"empty follower, trimmed leader":  {followerEnd: 0, leaderEnd: 500, leaderStart: 300, to: 300, startOver: true, changed: true},
		"in range after all":              {followerEnd: 100, leaderEnd: 500, leaderStart: 50, to: 100},
		"leader start at follower end":    {followerEnd: 100, leaderEnd: 500, leaderStart: 100, to: 100},
		// Only a leader that ends below the follower truncates it.
		"leader ends at the follower's end":  {followerEnd: 100, leaderEnd: 100, leaderStart: 0, to: 100},
		"empty leader at the follower's end": {followerEnd: 100, leaderEnd: 100, leaderStart: 100, to: 100},
	} {
		to, startOver, changed := OutOfRangeReset(off(tc.followerEnd), off(tc.leaderEnd), off(tc.leaderStart))
		if int64(to) != tc.to || startOver != tc.startOver || changed != tc.changed {
			t.Errorf("%s: = %d, %v, %v; want %d, %v, %v", name, to, startOver, changed, tc.to, tc.startOver, tc.changed)
		}
	}
}

func off(o int64) base.Offset { return base.Offset(o) }
