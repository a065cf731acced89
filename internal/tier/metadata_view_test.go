package tier

import (
	"errors"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestNewPartitionViewValidates(t *testing.T) {
	other := rseg(2, 0, 10, 1, remotemeta.CopyStarted)
	other.TP.Partition = 1
	for name, segs := range map[string][]remotemeta.RemoteSegment{
		"duplicate id":     {rseg(1, 0, 10, 1, remotemeta.CopyFinished), rseg(1, 10, 20, 1, remotemeta.CopyFinished)},
		"invalid segment":  {rseg(1, 0, 10, -1, remotemeta.CopyFinished)},
		"two partitions":   {rseg(1, 0, 10, 1, remotemeta.CopyStarted), other},
		"tiered twice":     {rseg(1, 0, 10, 1, remotemeta.CopyFinished), rseg(2, 5, 15, 1, remotemeta.CopyFinished)},
		"same range twice": {rseg(1, 0, 10, 1, remotemeta.CopyFinished), rseg(2, 0, 10, 1, remotemeta.CopyFinished)},
	} {
		if _, err := NewPartitionView(segs); err == nil {
			t.Errorf("%s: NewPartitionView accepted %v", name, segs)
		}
	}
	// Overlap is fine when only one is COPY_FINISHED (a retried copy) or
	// when their histories diverge (only one can be in any lineage).
	for name, segs := range map[string][]remotemeta.RemoteSegment{
		"retry after dangling": {rseg(1, 0, 10, 1, remotemeta.Dangling), rseg(2, 0, 10, 1, remotemeta.CopyFinished)},
		"diverged epochs": {
			rseg(1, 0, 10, 1, remotemeta.CopyFinished, es(1, 0), es(2, 5)),
			rseg(2, 0, 10, 1, remotemeta.CopyFinished, es(1, 0), es(3, 6)),
		},
	} {
		if _, err := NewPartitionView(segs); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestApply(t *testing.T) {
	v := mustView(rseg(1, 0, 10, 100, remotemeta.CopyFinished))
	started := rseg(2, 10, 20, 100, remotemeta.CopyStarted)
	v2, err := v.Apply(started)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Segment(started.ID); ok {
		t.Fatal("Apply changed its receiver")
	}
	finished, _ := started.Transition(remotemeta.CopyFinished)
	v3, err := v2.Apply(finished)
	if err != nil || v3.TieredNext(epoch0) != retention.TieredUpTo(20) {
		t.Fatalf("Apply(COPY_FINISHED) = %v, tiered %+v", err, v3.TieredNext(epoch0))
	}

	resized := finished
	resized.SizeBytes++
	cases := []struct {
		name string
		v    PartitionView
		s    remotemeta.RemoteSegment
	}{
		{"not loaded", PartitionView{}, started},
		{"born finished", v, rseg(3, 10, 20, 1, remotemeta.CopyFinished)},
		{"backwards", v3, started},
		{"changes size", v2, resized},
		{"tiers twice", v3, rseg(3, 15, 25, 1, remotemeta.CopyStarted)}, // fine while started
	}
	for _, tc := range cases[:4] {
		if _, err := tc.v.Apply(tc.s); err == nil {
			t.Errorf("%s: Apply accepted %v", tc.name, tc.s.State)
		}
	}
	if _, err := v3.Apply(rseg(2, 10, 20, 100, remotemeta.CopyStarted)); !errors.Is(err, remotemeta.ErrInvalidTransition) {
		t.Errorf("COPY_FINISHED -> COPY_STARTED: %v, want remotemeta.ErrInvalidTransition", err)
	}
	v4, err := v3.Apply(cases[4].s)
	if err != nil {
		t.Fatalf("an overlapping COPY_STARTED: %v", err)
	}
	dup, _ := cases[4].s.Transition(remotemeta.CopyFinished)
	if _, err := v4.Apply(dup); err == nil {
		t.Error("Apply let two COPY_FINISHED segments overlap in one lineage")
	}
}

func TestTieredNext(t *testing.T) {
	diverged := rseg(3, 20, 30, 1, remotemeta.CopyFinished, es(1, 20)) // epoch 1 ended at 25 in the lineage
	lineage := []base.EpochStart{es(0, 0), es(1, 15), es(2, 25)}
	for _, tc := range []struct {
		name    string
		v       PartitionView
		lineage []base.EpochStart
		want    retention.Tiered
	}{
		{"not loaded", PartitionView{}, lineage, retention.TieredUnknown()},
		{"empty", mustView(), lineage, retention.NothingTiered()},
		{"only failed attempts", mustView(rseg(1, 0, 10, 1, remotemeta.Dangling), rseg(2, 0, 10, 1, remotemeta.CopyStarted)), lineage, retention.NothingTiered()},
		{"tiered", mustView(rseg(1, 0, 10, 1, remotemeta.CopyFinished), rseg(2, 10, 15, 1, remotemeta.CopyFinished), rseg(4, 15, 40, 1, remotemeta.Dangling)), lineage, retention.TieredUpTo(15)},
		{"deleting is not tiered", mustView(rseg(1, 0, 10, 1, remotemeta.DeleteStarted)), lineage, retention.NothingTiered()},
		{"diverged segment ignored", mustView(rseg(1, 0, 10, 1, remotemeta.CopyFinished), diverged), lineage, retention.TieredUpTo(10)},
		{"epoch cache not loaded", mustView(rseg(1, 0, 10, 1, remotemeta.CopyFinished)), nil, retention.TieredUnknown()},
		{"nothing, no epochs yet", mustView(), nil, retention.NothingTiered()},
		{
			// The epoch cache was truncated from the front to log start 5:
			// the segment holding it is still in the lineage.
			"lineage truncated from start", mustView(rseg(1, 0, 10, 1, remotemeta.CopyFinished, es(0, 0), es(1, 3))),
			[]base.EpochStart{es(1, 5), es(2, 12)}, retention.TieredUpTo(10),
		},
		{
			"segment below the lineage", mustView(rseg(1, 0, 5, 1, remotemeta.CopyFinished)),
			[]base.EpochStart{es(1, 5)}, retention.NothingTiered(),
		},
		{
			// [5, 15) says epoch 1 wrote 5..9; the lineage says epoch 0 did
			// (epoch 1 starts at 10): a diverged history, not this log's.
			"epoch starts early in the segment",
			mustView(rseg(1, 0, 5, 1, remotemeta.CopyFinished), rseg(2, 5, 15, 1, remotemeta.CopyFinished, es(1, 5))),
			[]base.EpochStart{es(0, 0), es(1, 10)}, retention.TieredUpTo(5),
		},
		{
			// Two COPY_FINISHED segments whose histories differ only below
			// the (truncated) lineage's first offset: both are in the lineage
			// and they overlap, so the tier cannot be known.
			"overlap in the lineage after truncation",
			mustView(
				rseg(1, 0, 10, 1, remotemeta.CopyFinished, es(0, 0), es(2, 8)),
				rseg(2, 5, 15, 1, remotemeta.CopyFinished, es(1, 5), es(2, 8)),
			),
			[]base.EpochStart{es(2, 8)}, retention.TieredUnknown(),
		},
	} {
		if got := tc.v.TieredNext(tc.lineage); got != tc.want {
			t.Errorf("%s: TieredNext = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestListOffsetsAnswers(t *testing.T) {
	tiered := mustView(rseg(1, 0, 10, 1, remotemeta.CopyFinished), rseg(2, 10, 20, 1, remotemeta.CopyFinished))
	if o, ok := tiered.LastTiered(epoch0); !ok || o != 19 {
		t.Errorf("LastTiered = %d, %v; want 19", o, ok)
	}
	for name, v := range map[string]PartitionView{"not loaded": {}, "nothing tiered": mustView()} {
		if _, ok := v.LastTiered(epoch0); ok {
			t.Errorf("%s: LastTiered ok", name)
		}
	}
	for _, tc := range []struct {
		name       string
		v          PartitionView
		localStart base.Offset
		want       base.Offset
		ok         bool
	}{
		{"not loaded", PartitionView{}, 0, 0, false},
		{"nothing tiered", mustView(), 7, 7, true},
		{"tiered", tiered, 5, 20, true},
		{"local starts past the tier", tiered, 30, 30, true},
	} {
		got, ok := tc.v.EarliestPendingUpload(epoch0, tc.localStart)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: EarliestPendingUpload = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRetentionTierUnknownAboveHighWatermark(t *testing.T) {
	v := mustView(rseg(1, 0, 10, 100, remotemeta.CopyFinished), rseg(2, 10, 20, 100, remotemeta.CopyFinished))
	if tr, remote := v.RetentionTier(epoch0, 15); tr.Known || remote != nil {
		t.Errorf("tieredNext 20 above high watermark 15: %+v %v", tr, remote)
	}
	tr, remote := v.RetentionTier(epoch0, 20)
	want := []retention.Segment{{Range: rng(0, 10), SizeBytes: 100, MaxTimestampMs: 10}, {Range: rng(10, 20), SizeBytes: 100, MaxTimestampMs: 20}}
	if tr != retention.TieredUpTo(20) || !slices.Equal(remote, want) {
		t.Errorf("RetentionTier = %+v %v", tr, remote)
	}
	if d := mustView(rseg(1, 0, 1, 1, remotemeta.Dangling), rseg(2, 1, 2, 1, remotemeta.CopyFinished)).Dangling(); len(d) != 1 || d[0].ID != sid(1) {
		t.Errorf("remotemeta.Dangling = %v", d)
	}
}

// SegmentAt and FinishedFrom treat each segment as [Start, End): the
// offset at a boundary belongs to the segment that starts there, and
// tieredNext to none.
func TestSegmentAtAndFinishedFromAreHalfOpen(t *testing.T) {
	v := mustView(
		rseg(1, 0, 10, 1, remotemeta.CopyFinished),
		rseg(2, 10, 20, 1, remotemeta.CopyFinished),
		rseg(3, 20, 30, 1, remotemeta.Dangling),
	)
	for _, tc := range []struct {
		o    base.Offset
		want remotemeta.SegmentID // zero: none
	}{
		{0, sid(1)}, {9, sid(1)}, {10, sid(2)}, {19, sid(2)}, {20, remotemeta.SegmentID{}}, {25, remotemeta.SegmentID{}},
	} {
		s, ok := v.SegmentAt(epoch0, tc.o)
		if ok != !tc.want.IsZero() || (ok && s.ID != tc.want) {
			t.Errorf("SegmentAt(%d) = %v %v, %v; want %v", tc.o, s.ID, s.Range, ok, tc.want)
		}
	}
	if _, ok := (PartitionView{}).SegmentAt(epoch0, 0); ok {
		t.Error("SegmentAt of a view that is not loaded is ok")
	}
	for _, tc := range []struct {
		o    base.Offset
		want []base.Range
	}{
		{0, []base.Range{rng(0, 10), rng(10, 20)}},
		{9, []base.Range{rng(0, 10), rng(10, 20)}},
		{10, []base.Range{rng(10, 20)}},
		{20, nil},
	} {
		var got []base.Range
		for _, s := range v.FinishedFrom(epoch0, tc.o) {
			got = append(got, s.Range)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("FinishedFrom(%d) = %v, want %v", tc.o, got, tc.want)
		}
	}
}
