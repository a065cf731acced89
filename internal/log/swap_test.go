package log

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// TestFinishSwapReplacesASegmentAtItsLastOffset: a crash left a compacted
// copy (0.log.swap) whose last batch reaches the single record of segment
// 5, the last segment it replaced: that record itself, or an empty batch
// (exactly a header long, as the cleaner leaves one) covering offsets 2 to
// 5. Open deletes every replaced segment, the one that starts at the
// copy's last offset included, and keeps segment 6, which the copy does
// not reach.
func TestFinishSwapReplacesASegmentAtItsLastOffset(t *testing.T) {
	for _, tc := range []struct {
		name string
		last func(batches [][]byte) []byte
	}{
		{"the record at 5", func(batches [][]byte) []byte { return batches[5] }},
		{"an empty batch over 2-5", func([][]byte) []byte { return emptyBatch(2, 4, 10) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t)
			l := mustOpen(t, o)
			batches := appendSegments(t, l, 5, 1, 2) // [0,5) [5,6) [6,8)
			l.stop(t, true)
			kept := [][]byte{batches[0], batches[1], tc.last(batches)}
			if err := os.WriteFile(segFile(o, 0, ".log"+swapSuffix), concat(kept), 0o644); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, o)
			defer l.Close()
			if exists(segFile(o, 5, ".log")) {
				t.Error("segment 5, which the copy replaced, is still there")
			}
			want := append(kept, batches[6:]...)
			if got := readBatches(t, l); !bytes.Equal(concat(got), concat(want)) {
				t.Fatalf("the log holds %d batches after finishing the swap, want %d (the copy's, then offsets 6 and 7)", len(got), len(want))
			}
			if segs := l.Segments(); len(segs) != 2 || segs[0].BaseOffset != 0 || segs[1].BaseOffset != base.Offset(6) {
				t.Fatalf("segments %+v, want the copy at 0 and segment 6", segs)
			}
		})
	}
}

// TestFinishSwapStopsOnAFailedRemove: a replaced segment file that cannot
// be removed stops Open with the error, and the copy stays a .swap (it
// must never appear beside a segment it replaced); a file found gone
// (ENOENT) is no error. Once the disk obliges, Open finishes the swap.
func TestFinishSwapStopsOnAFailedRemove(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	batches := appendSegments(t, l, 5, 2) // [0,5) [5,7)
	l.stop(t, true)
	kept := [][]byte{batches[0], batches[4]} // offsets 0 and 4
	if err := os.WriteFile(segFile(o, 0, ".log"+swapSuffix), concat(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	var broken atomic.Bool
	broken.Store(true)
	o.FS = vfs.NewFaulty(vfs.Default, func(op vfs.Op, path string) error {
		switch {
		case op != vfs.OpRemove:
			return nil
		case filepath.Ext(path) == logSuffix && broken.Load():
			return errors.New("injected: remove failed")
		case filepath.Ext(path) == ".timeindex":
			// Gone already, as if another hand removed it first.
			if err := os.Remove(path); err != nil {
				return err
			}
			return fs.ErrNotExist
		}
		return nil
	})
	if _, err := Open(o); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("Open with a replaced segment that cannot be removed = %v, want the remove's error", err)
	}
	if !exists(segFile(o, 0, ".log"+swapSuffix)) || !exists(segFile(o, 0, ".log")) {
		t.Fatal("the copy took the place of a segment file that is still there")
	}
	broken.Store(false)
	l = mustOpen(t, o)
	defer l.Close()
	want := append(kept, batches[5:]...)
	if got := readBatches(t, l); !bytes.Equal(concat(got), concat(want)) {
		t.Fatalf("the log holds %d batches after finishing the swap, want %d (offsets 0, 4, 5, 6)", len(got), len(want))
	}
}

// appendSegments fills one segment after another, rolling between them:
// counts[i] one-record batches in the i-th. It returns every batch.
func appendSegments(t fataler, l *Log, counts ...int) [][]byte {
	t.Helper()
	var batches [][]byte
	for i, n := range counts {
		if i > 0 {
			if err := l.Roll(); err != nil {
				t.Fatalf("Roll: %v", err)
			}
		}
		batches = append(batches, appendN(t, l, n, 1, 10, 0)...)
	}
	return batches
}
