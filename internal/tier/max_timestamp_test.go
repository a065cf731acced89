package tier

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
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
