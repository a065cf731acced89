package tier

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
)

// MaxTimestampFrom agrees with a scan of the local batches from the batch
// holding from, for every from of every tiered segment; a batch holding
// from is answered at from, never below it.
func TestMaxTimestampFromMatchesLocalScan(t *testing.T) {
	l := newTestLog(t, 120, 8<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	if len(segs) < 2 {
		t.Fatalf("copied %d segments", len(segs))
	}
	for _, s := range segs {
		all, err := l.Read(s.Range.Start, 1<<30, nil)
		if err != nil {
			t.Fatal(err)
		}
		for from := s.Range.Start; from < s.Range.End; from++ {
			var wantTs int64
			var wantAt base.Offset
			found := false
			for it := record.SplitBatches(all); ; {
				_, h, more := it.Next()
				if !more || h.BaseOffset >= s.Range.End {
					break
				}
				if h.NextOffset() > from && (!found || h.MaxTimestamp > wantTs) {
					wantTs, wantAt, found = h.MaxTimestamp, max(h.BaseOffset, from), true
				}
			}
			ts, at, ok, err := r.reader.MaxTimestampFrom(t.Context(), s, from)
			if err != nil || !ok || ts != wantTs || at != wantAt {
				t.Fatalf("MaxTimestampFrom(%v, %d) = %d at %d, %v, %v; want %d at %d", s.Range, from, ts, at, ok, err, wantTs, wantAt)
			}
		}
		if _, _, ok, err := r.reader.MaxTimestampFrom(t.Context(), s, s.Range.End); ok || err != nil {
			t.Fatalf("MaxTimestampFrom at the segment's end: %v, %v", ok, err)
		}
	}
}

// TestMaxTimestampFromTieNamesTheFirstBatch: when two batches of a remote
// segment share the largest timestamp, ListOffsets -3 names the first (as
// the local log and Kafka do), and RecordOfMaxTimestamp reads that batch
// back and finds the record, never below from.
func TestMaxTimestampFromTieNamesTheFirstBatch(t *testing.T) {
	o := log.DefaultOptions(t.TempDir(), testClock)
	l, err := log.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var bases []base.Offset
	for _, ts := range []int64{100, 300, 200, 300, 250} {
		bases = append(bases, l.End())
		if err := l.Append(makeBatch(l.End(), 3, 20, ts)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	if len(segs) != 1 {
		t.Fatalf("copied %d segments, want 1", len(segs))
	}
	for _, tc := range []struct {
		from, want base.Offset
	}{
		{from: 0, want: bases[1]},
		{from: bases[1] + 1, want: bases[1] + 1}, // inside the first batch at 300
		{from: bases[2], want: bases[3]},
	} {
		ts, at, ok, err := r.reader.MaxTimestampFrom(t.Context(), segs[0], tc.from)
		if err != nil || !ok || ts != 300 || at != tc.want {
			t.Errorf("MaxTimestampFrom(%d) = %d at %d, %v, %v; want 300 at %d", tc.from, ts, at, ok, err, tc.want)
			continue
		}
		rec, ok, err := r.reader.RecordOfMaxTimestamp(t.Context(), segs[0], at, ts, tc.from)
		if err != nil || !ok || rec != tc.want {
			t.Errorf("RecordOfMaxTimestamp(%d, 300, from %d) = %d, %v, %v; want %d", at, tc.from, rec, ok, err, tc.want)
		}
	}
}
