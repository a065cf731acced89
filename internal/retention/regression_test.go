package retention

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// Reference 000: a freshly elected leader ran size retention before it had
// read how far the tier reached (-1), counted the whole local log on top of
// the remote tier, saw a false breach at the retention.bytes cap and
// expired every copied segment from both tiers. The log below is that
// shape: fully copied [0, 200), local mirror of it (local.retention = -2
// resolved to the total), sitting exactly at the cap.
func TestSizeRetentionFreshLeaderDoesNotDoubleCount(t *testing.T) {
	const capBytes = 2200
	snap := func(tiered Tiered) Snapshot {
		return Snapshot{
			HighWatermark: 250,
			Remote:        []Segment{seg(0, 100, 1000, 10), seg(100, 200, 1000, 20)},
			Local:         []Segment{seg(0, 100, 1000, 10), seg(100, 200, 1000, 20), seg(200, 250, 200, 30)},
			Tiered:        tiered,
		}
	}
	policy := Policy{RetentionBytes: LimitOf(capBytes), LocalRetentionBytes: LimitOf(capBytes)}
	for _, tc := range []struct {
		name   string
		tiered Tiered
	}{
		{"metadata not loaded yet", TieredUnknown()},
		{"metadata loaded", TieredUpTo(200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(tc.tiered)
			d := Plan(s, policy, 40)
			if d.NewLogStart != 0 || len(d.DeleteRemote) != 0 || len(d.LocalDeletions(s.Local)) != 0 || len(d.Reasons) != 0 {
				t.Fatalf("at the cap the plan deletes: %+v", d)
			}
		})
	}
	if got, _ := CountedBytes(snap(TieredUpTo(200))); got != capBytes {
		t.Errorf("CountedBytes = %d, want %d (remote 2000 + untiered local 200)", got, capBytes)
	}
}

// Reference 001 (KAFKA-17212): a one-record segment whose base offset is
// the last tiered offset was compared with ">= highest tiered offset" and
// counted as local-only on top of its remote copy. tieredNext is exclusive,
// so the comparison here is base >= tieredNext and it is counted once.
func TestSizeRetentionSingleRecordSegmentNotCountedTwice(t *testing.T) {
	s := Snapshot{
		HighWatermark: 150,
		Remote:        []Segment{seg(0, 100, 1000, 10), seg(100, 101, 500, 20)},
		Local:         []Segment{seg(100, 101, 500, 20), seg(101, 150, 300, 30)},
		Tiered:        TieredUpTo(101),
	}
	if got, _ := CountedBytes(s); got != 1800 {
		t.Fatalf("CountedBytes = %d, want 1800 (the one-record segment once)", got)
	}

	// At 1000 bytes: 1800-1000 = 800 < 1000, nothing goes. Counting the
	// one-record segment twice (2300) would delete [0, 100).
	d := Plan(s, Policy{RetentionBytes: LimitOf(1000), LocalRetentionBytes: LimitOf(1000)}, 0)
	if d.NewLogStart != 0 || len(d.DeleteRemote) != 0 || len(d.LocalDeletions(s.Local)) != 0 {
		t.Fatalf("plan at 1000 bytes deletes: %+v", d)
	}

	// At 800 bytes exactly [0, 100) goes and 800 remain; counting it twice
	// would also delete the one-record segment and move log start to 101.
	d = Plan(s, Policy{RetentionBytes: LimitOf(800)}, 0)
	if d.NewLogStart != 100 || !slices.Equal(d.DeleteRemote, []base.Range{rng(0, 100)}) {
		t.Fatalf("plan at 800 bytes: NewLogStart %d, DeleteRemote %v; want 100, [[0, 100)]", d.NewLogStart, d.DeleteRemote)
	}
	if r := d.Reasons[0]; r.TotalBytes != 1800 || r.LimitBytes != 800 {
		t.Errorf("reason = %v, want total 1800 limit 800", r)
	}
}
