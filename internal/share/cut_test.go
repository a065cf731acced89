package share

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func acq(start, end base.Offset, deliveries int16) Acquisition {
	return Acquisition{Offsets: rng(start, end), Deliveries: deliveries}
}

func TestCutAtBatches(t *testing.T) {
	batches := []base.Range{rng(0, 4), rng(4, 8), rng(8, 12), rng(14, 20), rng(20, 21)}
	tests := []struct {
		name      string
		got       []Acquisition
		batchSize int64
		want      []Acquisition
	}{
		{name: "no preference cuts nothing", got: []Acquisition{acq(0, 21, 1)}, batchSize: 0,
			want: []Acquisition{acq(0, 21, 1)}},
		{name: "at most batchSize offsets: one piece", got: []Acquisition{acq(0, 8, 1)}, batchSize: 8,
			want: []Acquisition{acq(0, 8, 1)}},
		{name: "cut at each batch once batchSize is reached", got: []Acquisition{acq(0, 21, 1)}, batchSize: 4,
			want: []Acquisition{acq(0, 4, 1), acq(4, 8, 1), acq(8, 14, 1), acq(14, 20, 1), acq(20, 21, 1)}},
		{name: "a piece runs on to the next batch start", got: []Acquisition{acq(0, 21, 1)}, batchSize: 5,
			want: []Acquisition{acq(0, 8, 1), acq(8, 14, 1), acq(14, 20, 1), acq(20, 21, 1)}},
		{name: "a gap stays with the piece before the batch after it", got: []Acquisition{acq(8, 20, 1)}, batchSize: 6,
			want: []Acquisition{acq(8, 14, 1), acq(14, 20, 1)}},
		{name: "batchSize counts from the piece's first offset", got: []Acquisition{acq(8, 20, 1)}, batchSize: 8,
			want: []Acquisition{acq(8, 20, 1)}},
		{name: "an acquisition starting inside a batch", got: []Acquisition{acq(2, 12, 1)}, batchSize: 2,
			want: []Acquisition{acq(2, 4, 1), acq(4, 8, 1), acq(8, 12, 1)}},
		{name: "each acquisition is cut on its own and keeps its deliveries",
			got: []Acquisition{acq(0, 8, 3), acq(8, 21, 1)}, batchSize: 4,
			want: []Acquisition{acq(0, 4, 3), acq(4, 8, 3), acq(8, 14, 1), acq(14, 20, 1), acq(20, 21, 1)}},
		{name: "a huge batch is not split", got: []Acquisition{acq(14, 20, 1)}, batchSize: 1,
			want: []Acquisition{acq(14, 20, 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CutAtBatches(slices.Clone(tt.got), batches, tt.batchSize); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCutAtBatchesProperties: the pieces list the same offsets with the
// same deliveries; each starts where its acquisition or a log batch starts;
// and a piece is cut at the first batch start batchSize or more past its
// start (none inside it at or past that point).
func TestCutAtBatchesProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var batches []base.Range
		off := base.Offset(rapid.IntRange(0, 3).Draw(t, "first"))
		for range rapid.IntRange(0, 12).Draw(t, "batches") {
			off += base.Offset(rapid.IntRange(0, 2).Draw(t, "gap"))
			n := base.Offset(rapid.IntRange(1, 6).Draw(t, "len"))
			batches = append(batches, rng(off, off+n))
			off += n
		}
		var got []Acquisition
		at := base.Offset(rapid.IntRange(0, 4).Draw(t, "acqFirst"))
		for range rapid.IntRange(0, 4).Draw(t, "acqs") {
			at += base.Offset(rapid.IntRange(0, 3).Draw(t, "acqGap"))
			n := base.Offset(rapid.IntRange(1, 15).Draw(t, "acqLen"))
			got = append(got, acq(at, at+n, int16(rapid.IntRange(1, 4).Draw(t, "deliveries"))))
			at += n
		}
		size := int64(rapid.IntRange(-1, 10).Draw(t, "batchSize"))

		cut := CutAtBatches(slices.Clone(got), batches, size)

		if a, b := perOffset(got), perOffset(cut); !slices.Equal(a, b) {
			t.Fatalf("offsets changed: %v -> %v", got, cut)
		}
		starts := map[base.Offset]bool{}
		for _, a := range got {
			starts[a.Offsets.Start] = true
		}
		for _, b := range batches {
			starts[b.Start] = true
		}
		for _, p := range cut {
			if !starts[p.Offsets.Start] {
				t.Fatalf("piece %v starts neither an acquisition nor a batch", p)
			}
			for _, b := range batches {
				if size > 0 && b.Start > p.Offsets.Start && b.Start < p.Offsets.End && int64(b.Start-p.Offsets.Start) >= size {
					t.Fatalf("piece %v should have been cut at %d (batchSize %d)", p, b.Start, size)
				}
			}
		}
		if size <= 0 && !slices.Equal(cut, got) {
			t.Fatalf("batchSize %d cut %v into %v", size, got, cut)
		}
	})
}

func perOffset(as []Acquisition) []string {
	var out []string
	for _, a := range as {
		for off := a.Offsets.Start; off < a.Offsets.End; off++ {
			out = append(out, fmt.Sprintf("%d/%d", off, a.Deliveries))
		}
	}
	return out
}
