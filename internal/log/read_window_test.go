package log

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// TestReadAnswersAsAWalkOfTheWholeSegment: Read's first pread covers the
// walk from the index entry and maxBytes past it; whether the batch holding
// from lies inside that window or past it (a sparse index, a batch larger
// than the window's rest), and whatever maxBytes is, it returns what a walk
// of the whole segment returns: the batch holding from, then whole batches
// while they fit in maxBytes.
func TestReadAnswersAsAWalkOfTheWholeSegment(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, interval := range []int{0, 256, 4096, 1 << 20} {
		o := testOptions(t)
		o.SegmentBytes = 64 << 20
		o.IndexIntervalBytes = interval
		l := mustOpen(t, o)
		var batches [][]byte
		for range 120 {
			valueBytes := 10 + rng.IntN(900)
			if rng.IntN(15) == 0 {
				valueBytes = 70<<10 + rng.IntN(60<<10) // past the walk's slack
			}
			b := makeBatch(l.End(), 1+rng.IntN(4), valueBytes, 1)
			if err := l.Append(b); err != nil {
				t.Fatal(err)
			}
			batches = append(batches, b)
		}
		for from := base.Offset(0); from < l.End(); from++ {
			for _, maxBytes := range []int{0, 500, 5000, 100 << 10, 1 << 20} {
				got, err := l.Read(from, maxBytes, []byte("prefix"))
				if err != nil {
					t.Fatalf("interval %d: Read(%d, %d): %v", interval, from, maxBytes, err)
				}
				want := append([]byte("prefix"), walkedAnswer(batches, from, maxBytes)...)
				if !bytes.Equal(got, want) {
					t.Fatalf("interval %d: Read(%d, %d) returned %d bytes, want %d (%s)",
						interval, from, maxBytes, len(got), len(want), firstDifference(got, want))
				}
			}
		}
		l.Close()
	}
}

// walkedAnswer is Read's answer from batches (one segment), walked whole.
func walkedAnswer(batches [][]byte, from base.Offset, maxBytes int) []byte {
	var out []byte
	for _, b := range batches {
		h, err := record.ParseHeader(b)
		if err != nil {
			panic(err)
		}
		switch {
		case h.NextOffset() <= from:
		case out == nil:
			out = append([]byte{}, b...)
		case len(out)+len(b) <= maxBytes:
			out = append(out, b...)
		default:
			return out
		}
	}
	return out
}

func firstDifference(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("first difference at byte %d", i)
		}
	}
	return "one is a prefix of the other"
}

// TestReadNearAnIndexEntryIsOnePread: a consumer at the tail reads a few
// small batches a few KiB past the last index entry; the walk from the
// entry and the batches it returns take one pread of the segment file.
func TestReadNearAnIndexEntryIsOnePread(t *testing.T) {
	var reads atomic.Int64
	o := testOptions(t)
	o.IndexIntervalBytes = 4096
	o.FS = vfs.NewFaulty(vfs.Default, func(op vfs.Op, path string) error {
		if op == vfs.OpRead && strings.HasSuffix(path, ".log") {
			reads.Add(1)
		}
		return nil
	})
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 200, 1, 300, 1)
	for from := l.End() - 30; from < l.End(); from++ {
		reads.Store(0)
		got, err := l.Read(from, 1<<20, nil)
		if err != nil || len(got) == 0 {
			t.Fatalf("Read(%d): %d bytes, %v", from, len(got), err)
		}
		if n := reads.Load(); n != 1 {
			t.Fatalf("Read(%d) took %d preads of the segment, want 1", from, n)
		}
	}
}
