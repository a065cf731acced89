package log

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// emptyBatch is a batch with no records left that still covers n offsets
// from baseOffset, as the log cleaner leaves one (Kafka keeps such a batch
// for its producer state): exactly a header long.
func emptyBatch(baseOffset base.Offset, n int, ts int64) []byte {
	b := makeBatch(baseOffset, 0, 0, ts)
	binary.BigEndian.PutUint32(b[23:], uint32(n-1)) // lastOffsetDelta
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestEmptyBatchLastInTheSegmentSurvivesAReopen: a segment whose last
// batch is exactly a header long (an empty batch) keeps it after a clean
// reopen (the tail walk after the last index entry) and after a crash (the
// recovery scan), and reads walk to it: none takes the header that ends
// the file for a torn one.
func TestEmptyBatchLastInTheSegmentSurvivesAReopen(t *testing.T) {
	for _, clean := range []bool{true, false} {
		o := testOptions(t)
		l := mustOpen(t, o)
		first, empty := makeBatch(0, 1, 20, 10), emptyBatch(1, 2, 20)
		if len(empty) != record.HeaderSize {
			t.Fatalf("the empty batch is %d bytes, want %d", len(empty), record.HeaderSize)
		}
		if err := l.AppendReplicated(concat([][]byte{first, empty})); err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		l.stop(t, clean)
		l = mustOpen(t, o)
		if l.End() != 3 {
			t.Errorf("clean %v: End %d after the reopen, want 3 (the empty batch kept)", clean, l.End())
		}
		if got := readAll(t, l); !bytes.Equal(got, concat([][]byte{first, empty})) {
			t.Errorf("clean %v: the log reads %d bytes after the reopen, want both batches", clean, len(got))
		}
		for _, at := range []base.Offset{1, 2} {
			if got, err := l.Read(at, 1<<20, nil); err != nil || !bytes.Equal(got, empty) {
				t.Errorf("clean %v: Read(%d) = %d bytes, %v; want the empty batch", clean, at, len(got), err)
			}
		}
		// A start past the segment's max-timestamp batch walks the headers
		// (MaxTimestampFrom is of batch headers, an empty batch's too).
		if got, err := l.MaxTimestampFrom(2); err != nil || got != (base.Stamp{Ts: 20, Offset: 2, Ok: true}) {
			t.Errorf("clean %v: MaxTimestampFrom(2) = %+v, %v; want the empty batch's 20, at 2", clean, got, err)
		}
		l.stop(t, true)
	}
}
