package retention

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func seg(start, end base.Offset, sizeBytes, maxTsMs int64) Segment {
	return Segment{Range: base.Range{Start: start, End: end}, SizeBytes: sizeBytes, MaxTimestampMs: maxTsMs}
}

func rng(start, end base.Offset) base.Range { return base.Range{Start: start, End: end} }

// want is the part of a Decision a table row pins.
type want struct {
	newStart    base.Offset
	localBefore base.Offset
	remote      []base.Range
	kinds       []string // Reason kinds, in order
}

func checkDecision(t *testing.T, s Snapshot, d Decision, w want) {
	t.Helper()
	if d.NewLogStart != w.newStart {
		t.Errorf("NewLogStart = %d, want %d", d.NewLogStart, w.newStart)
	}
	if d.DeleteLocalBefore != w.localBefore {
		t.Errorf("DeleteLocalBefore = %d, want %d", d.DeleteLocalBefore, w.localBefore)
	}
	if !slices.Equal(d.DeleteRemote, w.remote) {
		t.Errorf("DeleteRemote = %v, want %v", d.DeleteRemote, w.remote)
	}
	var kinds []string
	for _, r := range d.Reasons {
		kinds = append(kinds, r.Kind)
	}
	if !slices.Equal(kinds, w.kinds) {
		t.Errorf("reason kinds = %v, want %v (reasons %v)", kinds, w.kinds, d.Reasons)
	}
}

// localOnly is a local-only log of four 100-byte segments [0,40) with
// timestamps 10, 20, 30, 40; the last is active.
func localOnly() Snapshot {
	return Snapshot{
		HighWatermark: 40,
		Local:         []Segment{seg(0, 10, 100, 10), seg(10, 20, 100, 20), seg(20, 30, 100, 30), seg(30, 40, 100, 40)},
		Tiered:        NothingTiered(),
	}
}

func TestCountedBytes(t *testing.T) {
	tiered := Snapshot{
		HighWatermark: 300,
		Local:         []Segment{seg(100, 200, 10, 0), seg(200, 250, 20, 0), seg(250, 300, 40, 0)},
		Remote:        []Segment{seg(0, 100, 1, 0), seg(100, 200, 2, 0)},
		Tiered:        TieredUpTo(200),
	}
	straddle := tiered
	straddle.Local = []Segment{seg(150, 220, 10, 0), seg(220, 300, 40, 0)}
	for _, tc := range []struct {
		name string
		s    Snapshot
		want int64
	}{
		{"local only counts every local segment", localOnly(), 400},
		{"local only above log start", func() Snapshot { s := localOnly(); s.LogStart = 10; return s }(), 300},
		{"tiered overlap counted once", tiered, 1 + 2 + 20 + 40},
		{"remote below log start not counted", func() Snapshot { s := tiered; s.LogStart = 100; return s }(), 2 + 20 + 40},
		{"local segment straddling tieredNext not counted", straddle, 1 + 2 + 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := CountedBytes(tc.s)
			if !ok || got != tc.want {
				t.Errorf("CountedBytes = %d, %v; want %d, true", got, ok, tc.want)
			}
		})
	}
	if _, ok := CountedBytes(Snapshot{Local: tiered.Local, Tiered: TieredUnknown()}); ok {
		t.Error("CountedBytes with unknown tiered state: ok = true")
	}
}

func TestPlanSizeRetention(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64
		w     want
	}{
		{"under the limit", 500, want{newStart: 0, localBefore: 0}},
		{"exactly at the limit", 400, want{newStart: 0, localBefore: 0}},
		{"one byte over keeps what stays >= limit", 399, want{newStart: 0, localBefore: 0}},
		{"deletes while remainder >= limit", 300, want{newStart: 10, localBefore: 10, kinds: []string{KindRetentionBytes}}},
		{"remainder exactly at limit", 200, want{newStart: 20, localBefore: 20, kinds: []string{KindRetentionBytes, KindRetentionBytes}}},
		{"zero limit stops at the active segment", 0, want{newStart: 30, localBefore: 30,
			kinds: []string{KindRetentionBytes, KindRetentionBytes, KindRetentionBytes}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := localOnly()
			d := Plan(s, Policy{RetentionBytes: LimitOf(tc.limit)}, 0)
			checkDecision(t, s, d, tc.w)
		})
	}
}

func TestPlanSizeRetentionReasonNumbers(t *testing.T) {
	d := Plan(localOnly(), Policy{RetentionBytes: LimitOf(200)}, 0)
	wantTotals := []int64{400, 300}
	for i, r := range d.Reasons {
		if r.TotalBytes != wantTotals[i] || r.LimitBytes != 200 || r.Tier != TierLocal {
			t.Errorf("reason %d = %+v, want total %d limit 200 local", i, r, wantTotals[i])
		}
	}
}

func TestPlanTimeRetention(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ts    []int64 // max timestamps of the four segments
		nowMs int64
		limit int64
		w     want
	}{
		{"nothing expired", []int64{10, 20, 30, 40}, 25, 100, want{}},
		{"age equal to limit is kept", []int64{10, 20, 30, 40}, 110, 100, want{}},
		{"expired prefix", []int64{10, 20, 30, 40}, 125, 100, want{newStart: 20, localBefore: 20,
			kinds: []string{KindRetentionMs, KindRetentionMs}}},
		{"stops at first unexpired (no hole)", []int64{10, 500, 30, 40}, 200, 100, want{newStart: 10, localBefore: 10,
			kinds: []string{KindRetentionMs}}},
		{"never the active segment", []int64{10, 20, 30, 40}, 10_000, 100, want{newStart: 30, localBefore: 30,
			kinds: []string{KindRetentionMs, KindRetentionMs, KindRetentionMs}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := localOnly()
			for i := range s.Local {
				s.Local[i].MaxTimestampMs = tc.ts[i]
			}
			checkDecision(t, s, Plan(s, Policy{RetentionMs: LimitOf(tc.limit)}, tc.nowMs), tc.w)
		})
	}
}

// A segment that stops the time rule may itself go by size; the time rule
// then continues, so that the next pass has nothing left to do.
func TestPlanTimeRetentionContinuesAfterSizeDeletion(t *testing.T) {
	s := localOnly()
	s.Local[0].MaxTimestampMs = 500
	d := Plan(s, Policy{RetentionMs: LimitOf(100), RetentionBytes: LimitOf(300)}, 200)
	checkDecision(t, s, d, want{newStart: 30, localBefore: 30,
		kinds: []string{KindRetentionBytes, KindRetentionMs, KindRetentionMs}})
}

func TestPlanHighWatermarkBoundsDeletion(t *testing.T) {
	for _, tc := range []struct {
		name string
		hw   base.Offset
		w    want
	}{
		{"hw inside the second segment", 15, want{newStart: 10, localBefore: 10, kinds: []string{KindRetentionMs}}},
		{"hw at a boundary lets that segment go", 20, want{newStart: 20, localBefore: 20,
			kinds: []string{KindRetentionMs, KindRetentionMs}}},
		{"hw at log start", 0, want{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := localOnly()
			s.HighWatermark = tc.hw
			checkDecision(t, s, Plan(s, Policy{RetentionMs: LimitOf(0), RetentionBytes: LimitOf(0)}, 10_000), tc.w)
		})
	}
}

func TestPlanDeleteRecords(t *testing.T) {
	for _, tc := range []struct {
		name     string
		logStart base.Offset
		to       base.Offset
		tiered   bool
		w        want
	}{
		{"zero means none", 0, 0, false, want{}},
		{"mid segment moves log start, deletes nothing whole", 0, 15, false, want{newStart: 15, localBefore: 15,
			kinds: []string{KindDeleteRecords}}},
		{"never backwards", 25, 15, false, want{newStart: 25, localBefore: 25,
			kinds: []string{KindBelowLogStart, KindBelowLogStart}}},
		{"to the high watermark keeps the active segment", 0, 40, false, want{newStart: 40, localBefore: 40,
			kinds: []string{KindDeleteRecords, KindDeleteRecords, KindDeleteRecords}}},
		{"tiered: deletes the remote prefix", 0, 20, true, want{newStart: 20, localBefore: 20,
			remote: []base.Range{rng(0, 10), rng(10, 20)},
			kinds:  []string{KindDeleteRecords, KindDeleteRecords, KindDeleteRecords, KindDeleteRecords}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := localOnly()
			s.LogStart, s.DeleteRecordsTo = tc.logStart, tc.to
			if tc.tiered {
				s.Remote = []Segment{seg(0, 10, 100, 10), seg(10, 20, 100, 20)}
				s.Tiered = TieredUpTo(20)
			}
			d := Plan(s, Policy{}, 0)
			checkDecision(t, s, d, tc.w)
			for _, del := range d.LocalDeletions(s.Local) {
				if del.Range == s.Local[len(s.Local)-1].Range {
					t.Errorf("active segment %v deleted", del.Range)
				}
			}
		})
	}
}

// tieredLog: remote [0,100) [100,200); local [100,200) [200,300) [300,350 active).
func tieredLog() Snapshot {
	return Snapshot{
		HighWatermark: 350,
		Remote:        []Segment{seg(0, 100, 1000, 10), seg(100, 200, 1000, 20)},
		Local:         []Segment{seg(100, 200, 1000, 20), seg(200, 300, 1000, 30), seg(300, 350, 500, 40)},
		Tiered:        TieredUpTo(200),
	}
}

func TestPlanTieredSizeRetention(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64
		w     want
	}{
		{"at cap: overlap not double counted", 3500, want{newStart: 0, localBefore: 0}},
		{"one remote segment over", 2500, want{newStart: 100, localBefore: 100,
			remote: []base.Range{rng(0, 100)}, kinds: []string{KindRetentionBytes}}},
		{"remote then its local copy", 1500, want{newStart: 200, localBefore: 200,
			remote: []base.Range{rng(0, 100), rng(100, 200)},
			kinds:  []string{KindRetentionBytes, KindRetentionBytes, KindBelowLogStart}}},
		{"into untiered local data", 500, want{newStart: 300, localBefore: 300,
			remote: []base.Range{rng(0, 100), rng(100, 200)},
			kinds:  []string{KindRetentionBytes, KindRetentionBytes, KindRetentionBytes, KindBelowLogStart}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tieredLog()
			checkDecision(t, s, Plan(s, Policy{RetentionBytes: LimitOf(tc.limit)}, 0), tc.w)
		})
	}
}

func TestPlanLocalRetention(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy Policy
		tiered Tiered
		w      want
	}{
		{"local bytes deletes tiered local copies only", Policy{LocalRetentionBytes: LimitOf(0)}, TieredUpTo(200),
			want{localBefore: 200, kinds: []string{KindLocalRetentionBytes}}},
		{"local bytes keeps what stays >= limit", Policy{LocalRetentionBytes: LimitOf(2000)}, TieredUpTo(200),
			want{localBefore: 0}},
		{"local ms deletes expired tiered copies", Policy{LocalRetentionMs: LimitOf(5)}, TieredUpTo(200),
			want{localBefore: 200, kinds: []string{KindLocalRetentionMs}}},
		{"local ms never deletes untiered data", Policy{LocalRetentionMs: LimitOf(0)}, TieredUpTo(200),
			want{localBefore: 200, kinds: []string{KindLocalRetentionMs}}},
		{"unset local limits delete nothing", Policy{}, TieredUpTo(200), want{}},
		{"unknown tiered state deletes nothing", Policy{LocalRetentionBytes: LimitOf(0)}, TieredUnknown(), want{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tieredLog()
			s.Tiered = tc.tiered
			checkDecision(t, s, Plan(s, tc.policy, 1000), tc.w)
		})
	}
}

func TestPlanLocalRetentionNothingTiered(t *testing.T) {
	s := localOnly()
	checkDecision(t, s, Plan(s, Policy{LocalRetentionBytes: LimitOf(0), LocalRetentionMs: LimitOf(0)}, 1000), want{})
}

func TestPlanTieredUnknown(t *testing.T) {
	s := tieredLog()
	s.Tiered = TieredUnknown()
	all := Policy{RetentionBytes: LimitOf(0), RetentionMs: LimitOf(0), LocalRetentionBytes: LimitOf(0), LocalRetentionMs: LimitOf(0)}
	checkDecision(t, s, Plan(s, all, 10_000), want{})

	s.DeleteRecordsTo = 250
	checkDecision(t, s, Plan(s, all, 10_000), want{newStart: 250, localBefore: 250,
		kinds: []string{KindDeleteRecords}})
}

func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Snapshot)
	}{
		{"no local segment", func(s *Snapshot) { s.Local = nil }},
		{"overlapping local", func(s *Snapshot) { s.Local[1].Range.Start = 150 }},
		{"negative size", func(s *Snapshot) { s.Local[0].SizeBytes = -1 }},
		{"bytes in an empty segment", func(s *Snapshot) { s.Local[2].Range.End = 300; s.HighWatermark = 300 }},
		{"hw above log end", func(s *Snapshot) { s.HighWatermark = 351 }},
		{"log start above hw", func(s *Snapshot) { s.LogStart = 351 }},
		{"delete records above hw", func(s *Snapshot) { s.HighWatermark = 300; s.DeleteRecordsTo = 301 }},
		{"tieredNext above hw", func(s *Snapshot) { s.HighWatermark = 150 }},
		{"remote past tieredNext", func(s *Snapshot) { s.Tiered = TieredUpTo(150) }},
		{"nothing tiered with remote segments", func(s *Snapshot) { s.Tiered = NothingTiered() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tieredLog()
			s.Local = slices.Clone(s.Local)
			tc.mutate(&s)
			if s.Validate() == nil {
				t.Fatal("Validate accepted an invalid snapshot")
			}
			defer func() {
				if recover() == nil {
					t.Error("Plan did not panic on an invalid snapshot")
				}
			}()
			Plan(s, Policy{}, 0)
		})
	}
	if (Policy{RetentionBytes: LimitOf(-1)}).Validate() == nil {
		t.Error("Policy.Validate accepted -1")
	}
}

// A log start below the tier's first segment (this replica, now leader,
// learned it before an earlier leader's retention deleted the remote
// segments below) moves to that segment, deleting the local copies below
// it; a log start inside or above the first segment, an unknown tier and
// a tier with nothing in it leave it.
func TestPlanLogStartBelowTheTier(t *testing.T) {
	gap := func() Snapshot {
		s := tieredLog()
		s.Remote = s.Remote[1:] // [0,100) was deleted from the tier
		s.Local = append([]Segment{seg(0, 100, 1000, 10)}, s.Local...)
		return s
	}
	for _, tc := range []struct {
		name string
		snap func() Snapshot
		w    want
	}{
		{"below the first remote segment", gap,
			want{newStart: 100, localBefore: 100, kinds: []string{KindNeitherTier, KindBelowLogStart}}},
		{"inside the first remote segment", func() Snapshot { s := gap(); s.LogStart = 150; return s },
			want{newStart: 150, localBefore: 150, kinds: []string{KindBelowLogStart}}},
		{"DeleteRecords past the first remote segment", func() Snapshot { s := gap(); s.DeleteRecordsTo = 250; return s },
			want{newStart: 250, localBefore: 250, remote: []base.Range{rng(100, 200)},
				kinds: []string{KindDeleteRecords, KindDeleteRecords, KindDeleteRecords}}},
		{"tier unknown", func() Snapshot { s := gap(); s.Tiered = TieredUnknown(); return s }, want{}},
		{"nothing tiered", func() Snapshot { s := localOnly(); s.LogStart = 5; return s }, want{newStart: 5, localBefore: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap()
			d := Plan(s, Policy{}, 0)
			checkDecision(t, s, d, tc.w)
			for _, r := range d.Reasons {
				if r.Kind == KindNeitherTier && r.Range != rng(s.LogStart, d.NewLogStart) {
					t.Errorf("reason %v, want the range [%d, %d)", r, s.LogStart, d.NewLogStart)
				}
			}
		})
	}
}

// Local retention applies to the local segments that survive total
// retention: a segment that ends at the new log start is going anyway and
// counts neither for the local size nor against the local time rule (here it
// is young, and would block the expired tiered copies after it).
func TestPlanLocalRetentionAfterTotalRetention(t *testing.T) {
	s := Snapshot{
		HighWatermark:   40,
		Remote:          []Segment{seg(0, 10, 100, 1000), seg(10, 20, 100, 0), seg(20, 30, 100, 0)},
		Local:           []Segment{seg(0, 10, 100, 1000), seg(10, 20, 100, 0), seg(20, 30, 100, 0), seg(30, 40, 100, 1000)},
		Tiered:          TieredUpTo(30),
		DeleteRecordsTo: 10,
	}
	for _, tc := range []struct {
		name   string
		policy Policy
		w      want
	}{
		{"local ms", Policy{LocalRetentionMs: LimitOf(500)}, want{newStart: 10, localBefore: 30, remote: []base.Range{rng(0, 10)},
			kinds: []string{KindDeleteRecords, KindDeleteRecords, KindLocalRetentionMs, KindLocalRetentionMs}}},
		{"local bytes", Policy{LocalRetentionBytes: LimitOf(100)}, want{newStart: 10, localBefore: 30, remote: []base.Range{rng(0, 10)},
			kinds: []string{KindDeleteRecords, KindDeleteRecords, KindLocalRetentionBytes, KindLocalRetentionBytes}}},
		{"local bytes at the local size", Policy{LocalRetentionBytes: LimitOf(300)}, want{newStart: 10, localBefore: 10, remote: []base.Range{rng(0, 10)},
			kinds: []string{KindDeleteRecords, KindDeleteRecords}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDecision(t, s, Plan(s, tc.policy, 1000), tc.w)
		})
	}
}
