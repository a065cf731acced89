package tier

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// TestCopyLagPassed pins KIP-1241's rule: 0 turns a check off, both off
// means no delay, otherwise any enabled check that is met releases the
// segment, and each check is met at its limit (>=).
func TestCopyLagPassed(t *testing.T) {
	seg := LocalSegment{BaseOffset: 0, NextOffset: 10, SizeBytes: 100, MaxTimestampMs: 1000}
	for _, tc := range []struct {
		name       string
		lag        CopyLag
		bytesAfter int64
		nowMs      int64
		want       bool
	}{
		{"both off", CopyLag{}, 0, 1000, true},
		{"time: younger than the lag", CopyLag{Ms: 500}, 0, 1499, false},
		{"time: exactly the lag", CopyLag{Ms: 500}, 0, 1500, true},
		{"time: older", CopyLag{Ms: 500}, 0, 9000, true},
		{"time: a future timestamp waits", CopyLag{Ms: 500}, 0, 900, false},
		{"time only: bytes after do not count", CopyLag{Ms: 500}, 1 << 40, 1000, false},
		{"size: too little after", CopyLag{Bytes: 300}, 299, 1000, false},
		{"size: exactly the lag", CopyLag{Bytes: 300}, 300, 1000, true},
		{"size only: age does not count", CopyLag{Bytes: 300}, 0, 1 << 40, false},
		{"both: neither met", CopyLag{Ms: 500, Bytes: 300}, 299, 1499, false},
		{"both: time met", CopyLag{Ms: 500, Bytes: 300}, 0, 1500, true},
		{"both: size met", CopyLag{Ms: 500, Bytes: 300}, 300, 1000, true},
		{"time: a lag of one ms, not yet", CopyLag{Ms: 1}, 0, 1000, false},
		{"size: a lag of one byte, not yet", CopyLag{Bytes: 1}, 0, 1000, false},
		{"size: a lag of one byte, met", CopyLag{Bytes: 1}, 1, 1000, true},
	} {
		if got := tc.lag.Passed(seg, tc.bytesAfter, tc.nowMs); got != tc.want {
			t.Errorf("%s: Passed(%+v, after %d, now %d) = %v, want %v", tc.name, tc.lag, tc.bytesAfter, tc.nowMs, got, tc.want)
		}
	}
}

func TestBytesAfter(t *testing.T) {
	local := []LocalSegment{lseg(0, 10, 100), lseg(10, 20, 20), lseg(20, 30, 3), active(30, 31, 1)}
	if got, want := bytesAfter(local), []int64{24, 4, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("bytesAfter = %v, want %v", got, want)
	}
	if got := bytesAfter(nil); len(got) != 0 {
		t.Fatalf("bytesAfter(nil) = %v", got)
	}
}

// TestCopyLagDelaysWithoutReordering: whatever the lag, the plan is a
// prefix of the plan without lag (a delay never skips a segment nor
// uploads out of order), it grows as time passes, and a lag with both
// checks off changes nothing.
func TestCopyLagDelaysWithoutReordering(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var local []LocalSegment
		var o base.Offset
		for i, n := 0, rapid.IntRange(1, 8).Draw(t, "segments"); i < n; i++ {
			l := base.Offset(rapid.IntRange(1, 5).Draw(t, "len"))
			seg := lseg(o, o+l, rapid.Int64Range(0, 100).Draw(t, "size"))
			seg.MaxTimestampMs = rapid.Int64Range(0, 1000).Draw(t, "ts")
			seg.Active = i == n-1
			local = append(local, seg)
			o += l
		}
		lag := CopyLag{Ms: rapid.Int64Range(0, 500).Draw(t, "lagMs"), Bytes: rapid.Int64Range(0, 400).Draw(t, "lagBytes")}
		nowMs := rapid.Int64Range(0, 1500).Draw(t, "now")
		later := nowMs + rapid.Int64Range(0, 1000).Draw(t, "dt")
		plan := func(lag CopyLag, now int64) []base.Range {
			return taskRanges(PlanCopies(local, mustView(), epoch0, o, CopyConfig{Lag: lag}, now))
		}
		free, delayed, afterWait := plan(CopyLag{}, nowMs), plan(lag, nowMs), plan(lag, later)
		if len(delayed) > len(free) || !slices.Equal(delayed, free[:len(delayed)]) {
			t.Fatalf("with lag %+v: %v, without: %v", lag, delayed, free)
		}
		if len(afterWait) < len(delayed) || !slices.Equal(delayed, afterWait[:len(delayed)]) {
			t.Fatalf("at %d: %v, later at %d: %v", nowMs, delayed, later, afterWait)
		}
		if lag == (CopyLag{}) && !slices.Equal(delayed, free) {
			t.Fatalf("a zero lag delayed: %v vs %v", delayed, free)
		}
	})
}
