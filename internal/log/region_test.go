package log

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// readRegion reads a region's bytes and closes its descriptor.
func readRegion(t *testing.T, r Region) []byte {
	t.Helper()
	if r.File == nil {
		return nil
	}
	defer r.File.Close()
	b := make([]byte, r.Size)
	if _, err := r.File.ReadAt(b, r.Pos); err != nil {
		t.Fatalf("reading region: %v", err)
	}
	return b
}

// TestReadRegionMatchesRead checks, from every offset, for several byte
// limits and for several offsets to stop below, that a region holds whole
// batches starting with the one holding the offset, that Next is one past
// its last batch, and that it never holds more than Read would, nor a batch
// starting at or after the offset to stop below.
func TestReadRegionMatchesRead(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	appendN(t, l, 40, 3, 100, 1000)
	for from := l.Start(); from < l.End(); from++ {
		for _, below := range []base.Offset{from + 1, from + 3, from + 4, from + 20, l.End(), l.End() + 5} {
			for _, maxBytes := range []int{1, 500, 2000, 1 << 20} {
				checkRegion(t, l, from, below, maxBytes)
			}
		}
	}
	if r, err := l.ReadRegion(l.End(), l.End(), 100); err != nil || r.File != nil || r.Next != l.End() {
		t.Fatalf("ReadRegion(End) = %+v, %v; want an empty region", r, err)
	}
	if r, err := l.ReadRegion(3, 3, 100); err != nil || r.File != nil || r.Next != 3 {
		t.Fatalf("ReadRegion(3, below 3) = %+v, %v; want an empty region", r, err)
	}
}

// checkRegion checks ReadRegion(from, below, maxBytes) against Read.
func checkRegion(t *testing.T, l *Log, from, below base.Offset, maxBytes int) {
	t.Helper()
	r, err := l.ReadRegion(from, below, maxBytes)
	if err != nil {
		t.Fatalf("ReadRegion(%d, %d, %d): %v", from, below, maxBytes, err)
	}
	got := readRegion(t, r)
	all, err := l.Read(from, 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := batchesBelow(all, below)
	if !bytes.HasPrefix(want, got) || len(got) == 0 {
		t.Fatalf("ReadRegion(%d, %d, %d) is not a non-empty prefix of Read's batches below %d", from, below, maxBytes, below)
	}
	if maxBytes >= len(want) && len(got) != len(want) {
		t.Fatalf("ReadRegion(%d, %d, %d) holds %d bytes, Read's batches below %d are %d", from, below, maxBytes, len(got), below, len(want))
	}
	n, err := record.ValidPrefix(got)
	if err != nil || n != len(got) {
		t.Fatalf("ReadRegion(%d, %d) holds a partial batch (%d of %d whole): %v", from, maxBytes, n, len(got), err)
	}
	var next base.Offset
	for it := record.SplitBatches(got); ; {
		_, h, ok := it.Next()
		if !ok {
			break
		}
		next = h.NextOffset()
	}
	if next != r.Next {
		t.Fatalf("ReadRegion(%d, %d).Next = %d, batches end at %d", from, maxBytes, r.Next, next)
	}
	if first, _ := record.ParseHeader(got); first.BaseOffset > from || first.NextOffset() <= from {
		t.Fatalf("ReadRegion(%d): first batch %d..%d does not hold it", from, first.BaseOffset, first.LastOffset())
	}
	if len(got) > maxBytes && next != firstNext(got) {
		t.Fatalf("ReadRegion(%d, %d) exceeds maxBytes with more than one batch", from, maxBytes)
	}
}

// batchesBelow is the batches of b that start below offset o.
func batchesBelow(b []byte, o base.Offset) []byte {
	n := 0
	for it := record.SplitBatches(b); ; {
		batch, h, ok := it.Next()
		if !ok || h.BaseOffset >= o {
			return b[:n]
		}
		n += len(batch)
	}
}

func firstNext(b []byte) base.Offset {
	h, _ := record.ParseHeader(b)
	return h.NextOffset()
}

// TestReadRegionOutlivesSegmentDeletion: a fetch being sent keeps its bytes
// even if retention deletes the segment meanwhile.
func TestReadRegionOutlivesSegmentDeletion(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	batches := appendN(t, l, 5, 2, 100, 1000)
	r, err := l.ReadRegion(0, l.End(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1, 1, 10, 2000)
	if err := l.DeleteSegmentsBefore(l.End()); err != nil {
		t.Fatal(err)
	}
	if l.Start() == 0 {
		t.Fatal("the first segment was not deleted")
	}
	if got, want := readRegion(t, r), bytes.Join(batches, nil); !bytes.Equal(got, want) {
		t.Fatal("a region read after its segment was deleted differs from what was appended")
	}
}

// TestReadRegionBoundsAndClose: a region is asked for inside [Start, End]
// only; Close closes the region's descriptor and runs Release once each.
func TestReadRegionBoundsAndClose(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	appendN(t, l, 3, 2, 100, 1000) // [0, 6)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1, 2, 100, 2000) // [6, 8)
	if err := l.DeleteSegmentsBefore(6); err != nil || l.Start() != 6 {
		t.Fatalf("DeleteSegmentsBefore(6): %v, Start %d", err, l.Start())
	}
	for _, from := range []base.Offset{5, 9} {
		if _, err := l.ReadRegion(from, l.End(), 1<<20); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Errorf("ReadRegion(%d) of [6, 8): %v, want ErrOffsetOutOfRange", from, err)
		}
	}
	r, err := l.ReadRegion(6, l.End(), 1<<20)
	if err != nil || r.File == nil || r.Size == 0 {
		t.Fatalf("ReadRegion(6): %+v, %v", r, err)
	}
	released := 0
	release := r.Release
	r.Release = func() {
		released++
		if release != nil {
			release()
		}
	}
	r.Close()
	if _, err := r.File.Stat(); !errors.Is(err, os.ErrClosed) || released != 1 {
		t.Fatalf("after Close: Stat %v, released %d times; want closed, once", err, released)
	}
	Region{}.Close() // an empty region has nothing to close
}

// TestReadRegionSizeAgainstMaxBytes: with an index entry at every batch, a
// region over maxBytes ends at the last batch boundary at or below it —
// exactly maxBytes when a boundary is there — and holds the first batch
// even when it alone is larger (KIP-74); one of exactly maxBytes is whole.
func TestReadRegionSizeAgainstMaxBytes(t *testing.T) {
	o := testOptions(t)
	o.IndexIntervalBytes = 0 // an entry at every batch but the first
	l := mustOpen(t, o)
	defer l.Close()
	batches := appendN(t, l, 10, 1, 100, 0)
	size := int64(len(batches[0]))
	for _, tc := range []struct {
		maxBytes int64
		want     int64
	}{
		{maxBytes: 10 * size, want: 10 * size},
		{maxBytes: 5 * size, want: 5 * size},
		{maxBytes: 5*size + size/2, want: 5 * size},
		{maxBytes: size / 2, want: size},
	} {
		r, err := l.ReadRegion(0, l.End(), int(tc.maxBytes))
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if r.Size != tc.want || r.Next != base.Offset(tc.want/size) {
			t.Errorf("maxBytes %d: region of %d bytes up to %d, want %d bytes up to %d", tc.maxBytes, r.Size, r.Next, tc.want, tc.want/size)
		}
	}
}
