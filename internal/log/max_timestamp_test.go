package log

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// TestMaxTimestampFromEveryOffset compares MaxTimestampFrom with a brute
// force over the batches, from every offset: the max of each segment is in
// its first batch, so a start inside a segment must scan it, and a start
// inside a batch must answer that batch at the start, not below it.
func TestMaxTimestampFromEveryOffset(t *testing.T) {
	o := testOptions(t)
	o.IndexIntervalBytes = 0
	l := mustOpen(t, o)
	defer l.Close()
	type batch struct {
		base base.Offset
		ts   int64
	}
	var batches []batch
	for i, ts := range []int64{400, 50, 200, 200, 300, 150, 300, 250, 100} {
		if i == 4 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		batches = append(batches, batch{l.End(), ts})
		if err := l.Append(makeBatch(l.End(), 2, 10, ts)); err != nil {
			t.Fatal(err)
		}
	}
	for from := base.Offset(0); from <= l.End(); from++ {
		var want base.Stamp
		for _, b := range batches {
			if b.base+2 > from && (!want.Ok || b.ts > want.Ts) {
				want = base.Stamp{Ts: b.ts, Offset: max(b.base, from), Ok: true}
			}
		}
		got, err := l.MaxTimestampFrom(from)
		if err != nil || got != want {
			t.Errorf("MaxTimestampFrom(%d) = %+v, %v; want %+v", from, got, err, want)
		}
	}
}

// TestMaxTimestampTieNamesTheFirstBatchAfterReopen: when two batches share
// the largest timestamp, ListOffsets -3 names the first (Kafka keeps the
// first offset it saw with the max), in the running log and after a clean
// close or a crash, however far apart the index entries are.
func TestMaxTimestampTieNamesTheFirstBatchAfterReopen(t *testing.T) {
	for _, interval := range []int{0, 1 << 20} {
		for _, clean := range []bool{true, false} {
			o := testOptions(t)
			o.IndexIntervalBytes = interval
			l := mustOpen(t, o)
			var first base.Offset
			for i, ts := range []int64{100, 300, 200, 300, 250} {
				if i == 1 {
					first = l.End()
				}
				if err := l.Append(makeBatch(l.End(), 2, 10, ts)); err != nil {
					t.Fatal(err)
				}
			}
			want := base.Stamp{Ts: 300, Offset: first, Ok: true}
			if got, err := l.MaxTimestampFrom(0); err != nil || got != want {
				t.Fatalf("interval %d, before the reopen: MaxTimestampFrom(0) = %+v, %v; want %+v", interval, got, err, want)
			}
			l.stop(t, clean)
			l = mustOpen(t, o)
			if got, err := l.MaxTimestampFrom(0); err != nil || got != want {
				t.Errorf("interval %d, reopened after a clean close %v: MaxTimestampFrom(0) = %+v, %v; want %+v", interval, clean, got, err, want)
			}
			l.stop(t, true)
		}
	}
}
