package tier

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
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
// first batch that reached the max timestamp at each offset entry where
// the max grew, as the local log does.
func TestIndexBuilderEntries(t *testing.T) {
	const size = IndexIntervalBytes / 2
	b := newIndexBuilder(0)
	for i, ts := range []int64{100, 300, 300, 200, 250, 400, 100, 150} {
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
	if want := []timeEntry{{ts: 300, rel: 1}, {ts: 400, rel: 5}}; !slices.Equal(gotTimes, want) {
		t.Errorf("time entries %+v, want %+v (the first batch at 300, then the max at the next entry)", gotTimes, want)
	}
}

// TestDecodeRemoteIndexesAtTheirBounds: a remote index's entries must lie
// inside the segment (an offset entry past position 0 and below the
// object's size, both kinds below the range's length) and strictly ascend
// in both fields; entries at those bounds are read, one past them is
// corrupt, and so is a torn entry.
func TestDecodeRemoteIndexesAtTheirBounds(t *testing.T) {
	seg := remotemeta.RemoteSegment{Range: base.Range{Start: 100, End: 200}, SizeBytes: 1000}
	offsets := func(es ...offsetEntry) []byte {
		var b []byte
		for _, e := range es {
			b = binary.BigEndian.AppendUint32(b, e.rel)
			b = binary.BigEndian.AppendUint32(b, e.pos)
		}
		return b
	}
	checkDecodes(t, "offset index", func(b []byte) error { _, err := decodeOffsetIndex("k", b, seg); return err }, []decodeCase{
		{"none", nil, true},
		{"the lowest", offsets(offsetEntry{0, 1}), true},
		{"the highest", offsets(offsetEntry{99, 999}), true},
		{"ascending by one", offsets(offsetEntry{1, 10}, offsetEntry{2, 11}), true},
		{"position 0", offsets(offsetEntry{1, 0}), false},
		{"position at the size", offsets(offsetEntry{1, 1000}), false},
		{"offset at the range's end", offsets(offsetEntry{100, 10}), false},
		{"offset repeated", offsets(offsetEntry{1, 10}, offsetEntry{1, 20}), false},
		{"position repeated", offsets(offsetEntry{1, 10}, offsetEntry{2, 10}), false},
		{"torn", offsets(offsetEntry{1, 10})[:7], false},
	})
	times := func(es ...timeEntry) []byte {
		var b []byte
		for _, e := range es {
			b = binary.BigEndian.AppendUint64(b, uint64(e.ts))
			b = binary.BigEndian.AppendUint32(b, e.rel)
		}
		return b
	}
	checkDecodes(t, "time index", func(b []byte) error { _, err := decodeTimeIndex("k", b, seg); return err }, []decodeCase{
		{"none", nil, true},
		{"the lowest offset", times(timeEntry{5, 0}), true},
		{"the highest offset", times(timeEntry{5, 99}), true},
		{"ascending by one", times(timeEntry{-1, 1}, timeEntry{0, 2}), true},
		{"offset at the range's end", times(timeEntry{5, 100}), false},
		{"timestamp repeated", times(timeEntry{5, 1}, timeEntry{5, 2}), false},
		{"offset repeated", times(timeEntry{5, 1}, timeEntry{6, 1}), false},
		{"torn", times(timeEntry{5, 1})[:11], false},
	})
}

// decodeCase is an encoded object and whether it must decode.
type decodeCase struct {
	name string
	b    []byte
	ok   bool
}

// checkDecodes runs decode on each case: it must succeed when ok, and
// otherwise fail with ErrCorruptObject.
func checkDecodes(t *testing.T, what string, decode func([]byte) error, cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		err := decode(tc.b)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrCorruptObject) {
			t.Errorf("%s, %s: %v, want ok %v", what, tc.name, err, tc.ok)
		}
	}
}
