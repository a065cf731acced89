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
