package broker

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestMaxTimestampCandidatesOrder(t *testing.T) {
	seg := func(start, end base.Offset, maxTs int64) remotemeta.RemoteSegment {
		return remotemeta.RemoteSegment{Range: base.Range{Start: start, End: end}, MaxTimestampMs: maxTs}
	}
	in := []remotemeta.RemoteSegment{seg(0, 10, 50), seg(10, 20, 90), seg(20, 30, 70), seg(30, 40, 90), seg(40, 50, 10)}
	var starts []base.Offset
	for _, s := range maxTimestampCandidates(in) {
		starts = append(starts, s.Range.Start)
	}
	if want := []base.Offset{10, 30, 20, 0, 40}; !slices.Equal(starts, want) {
		t.Fatalf("candidate order %v, want %v (max timestamp desc, then offset)", starts, want)
	}
	if in[0].Range.Start != 0 || in[1].Range.Start != 10 {
		t.Fatal("maxTimestampCandidates reordered its input")
	}
}

func TestBeats(t *testing.T) {
	best := base.Stamp{Ts: 100, Offset: 50, Ok: true}
	for _, tc := range []struct {
		maxTs int64
		start base.Offset
		want  bool
	}{
		{101, 500, true}, // a larger bound may hold a larger timestamp
		{100, 49, true},  // the same timestamp, possibly earlier
		{100, 50, false}, // cannot be earlier than the best itself
		{100, 60, false},
		{99, 0, false},
	} {
		if got := beats(tc.maxTs, tc.start, best); got != tc.want {
			t.Errorf("beats(%d, %d, %+v) = %v, want %v", tc.maxTs, tc.start, best, got, tc.want)
		}
	}
	if !beats(-1, 0, base.Stamp{}) {
		t.Error("anything beats nothing")
	}
}
