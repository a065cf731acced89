package tier

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// TestIndexBuilderRefusesWhatOverflowsAU32Field: a remote segment's index
// holds relative offsets and positions in u32s (Kafka's format): a batch
// whose last offset is exactly MaxUint32 past the upload's start, or that
// ends the upload at exactly MaxUint32 bytes, still fits; one more does not.
func TestIndexBuilderRefusesWhatOverflowsAU32Field(t *testing.T) {
	const start = base.Offset(5)
	for _, tc := range []struct {
		name      string
		lastDelta int32 // of a batch at start+MaxUint32-9
		sizeSoFar int64 // bytes of the upload before the batch
		fits      bool
	}{
		{"last offset at the bound", 9, 0, true},
		{"last offset past the bound", 10, 0, false},
		{"size at the bound", 9, math.MaxUint32 - 100, true},
		{"size past the bound", 9, math.MaxUint32 - 99, false},
	} {
		b := newIndexBuilder(start)
		b.next, b.sizeBytes = start+math.MaxUint32-9, tc.sizeSoFar
		h := record.Header{BaseOffset: b.next, LastOffsetDelta: tc.lastDelta, Length: 100 - record.LogOverhead}
		if err := b.add(h); (err == nil) != tc.fits {
			t.Errorf("%s: add = %v, want fits %v", tc.name, err, tc.fits)
		}
	}
}

// TestIndexBuilderEntries: an offset entry goes in before a batch once
// more than IndexIntervalBytes were uploaded since the last (with batches
// of half the interval, before every third), and the time index names the
// first batch that reached the max timestamp, as the local log does.
func TestIndexBuilderEntries(t *testing.T) {
	const size = IndexIntervalBytes / 2
	b := newIndexBuilder(0)
	for i, ts := range []int64{100, 300, 300, 200, 250, 300, 100, 150} {
		h := record.Header{BaseOffset: base.Offset(i), Length: size - record.LogOverhead, MaxTimestamp: ts}
		if err := b.add(h); err != nil {
			t.Fatal(err)
		}
	}
	offsets, times := b.finish()
	var gotOffsets []offsetEntry
	for i := 0; i < len(offsets); i += offsetEntryBytes {
		gotOffsets = append(gotOffsets, offsetEntry{rel: binary.BigEndian.Uint32(offsets[i:]), pos: binary.BigEndian.Uint32(offsets[i+4:])})
	}
	if want := []offsetEntry{{rel: 3, pos: 3 * size}, {rel: 6, pos: 6 * size}}; !slices.Equal(gotOffsets, want) {
		t.Errorf("offset entries %+v, want %+v", gotOffsets, want)
	}
	var gotTimes []timeEntry
	for i := 0; i < len(times); i += timeEntryBytes {
		gotTimes = append(gotTimes, timeEntry{ts: int64(binary.BigEndian.Uint64(times[i:])), rel: binary.BigEndian.Uint32(times[i+8:])})
	}
	if want := []timeEntry{{ts: 300, rel: 1}}; !slices.Equal(gotTimes, want) {
		t.Errorf("time entries %+v, want %+v (the first batch at 300)", gotTimes, want)
	}
}
