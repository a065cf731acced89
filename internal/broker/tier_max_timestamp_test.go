package broker

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func TestLaterStamp(t *testing.T) {
	none := stampedOffset{}
	at := func(ts int64, o base.Offset) stampedOffset { return stampedOffset{ts: ts, offset: o, ok: true} }
	for _, tc := range []struct {
		name    string
		a, b    stampedOffset
		want    stampedOffset
		commute bool
	}{
		{"both empty", none, none, none, true},
		{"one empty", none, at(5, 7), at(5, 7), true},
		{"larger timestamp wins, even at a later offset", at(5, 3), at(9, 70), at(9, 70), true},
		{"larger timestamp wins at an earlier offset", at(5, 70), at(9, 3), at(9, 3), true},
		{"a tie: the earlier offset (remote before local)", at(9, 40), at(9, 12), at(9, 12), true},
		{"the same batch in both tiers", at(9, 12), at(9, 12), at(9, 12), true},
		{"negative timestamps still compare", at(-5, 1), at(-3, 9), at(-3, 9), true},
	} {
		if got := laterStamp(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: laterStamp(%+v, %+v) = %+v, want %+v", tc.name, tc.a, tc.b, got, tc.want)
		}
		if got := laterStamp(tc.b, tc.a); tc.commute && got != tc.want {
			t.Errorf("%s (swapped): %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

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
	best := stampedOffset{ts: 100, offset: 50, ok: true}
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
	if !beats(-1, 0, stampedOffset{}) {
		t.Error("anything beats nothing")
	}
}
