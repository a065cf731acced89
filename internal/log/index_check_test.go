package log

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestCheckOffsetIndex(t *testing.T) {
	batches := []SegmentBatch{{0, 100, 5}, {300, 103, 5}, {700, 110, 5}}
	for _, tc := range []struct {
		name    string
		entries []IndexEntry
		want    int // problems
	}{
		{"agrees", []IndexEntry{{Offset: 103, Position: 300}, {Offset: 110, Position: 700}}, 0},
		{"none", nil, 0},
		{"inside a batch", []IndexEntry{{Offset: 103, Position: 301}}, 1},
		{"another batch's offset", []IndexEntry{{Offset: 104, Position: 300}, {Offset: 103, Position: 700}}, 2},
		{"past the batches", []IndexEntry{{Offset: 120, Position: 900}}, 1},
	} {
		if got := CheckOffsetIndex(tc.entries, batches); len(got) != tc.want {
			t.Errorf("%s: %d problems %q, want %d", tc.name, len(got), got, tc.want)
		}
	}
}

func TestCheckTimeIndex(t *testing.T) {
	// Max timestamps 50, 40, 70, 70, 90: the running max first reaches 50 at
	// offset 0, 70 at 2 and 90 at 4.
	batches := []SegmentBatch{{0, 0, 50}, {100, 1, 40}, {200, 2, 70}, {300, 3, 70}, {400, 4, 90}}
	for _, tc := range []struct {
		name    string
		entries []IndexEntry
		want    int
	}{
		{"agrees", []IndexEntry{{Offset: 2, Timestamp: 70}, {Offset: 4, Timestamp: 90}}, 0},
		{"the first batch", []IndexEntry{{Offset: 0, Timestamp: 50}}, 0},
		{"not the first to reach it", []IndexEntry{{Offset: 3, Timestamp: 70}}, 1},
		{"below the max so far", []IndexEntry{{Offset: 1, Timestamp: 40}}, 1},
		{"not the batch's timestamp", []IndexEntry{{Offset: 2, Timestamp: 60}}, 1},
		{"no such batch", []IndexEntry{{Offset: 7, Timestamp: 100}}, 1},
	} {
		if got := CheckTimeIndex(tc.entries, batches); len(got) != tc.want {
			t.Errorf("%s: %d problems %q, want %d", tc.name, len(got), got, tc.want)
		}
	}
	// Timestamps below zero (-1 is "none") run the same way: the running
	// max starts at the first batch's, not at 0.
	batches = []SegmentBatch{{0, 0, -10}, {100, 1, -5}, {200, 2, -7}}
	for _, tc := range []struct {
		name    string
		entries []IndexEntry
		want    int
	}{
		{"agrees", []IndexEntry{{Offset: 0, Timestamp: -10}, {Offset: 1, Timestamp: -5}}, 0},
		{"below the max so far", []IndexEntry{{Offset: 2, Timestamp: -7}}, 1},
	} {
		if got := CheckTimeIndex(tc.entries, batches); len(got) != tc.want {
			t.Errorf("%s: %d problems %q, want %d", tc.name, len(got), got, tc.want)
		}
	}
}

// TestInspectIndexOfARealLog: the indexes a log writes agree with its
// segments; an entry changed on disk is found.
func TestInspectIndexOfARealLog(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	for i, ts := range []int64{500, 100, 900, 300, 900, 1200, 50, 1300, 1250, 2000, 10, 2100} {
		if err := l.Append(makeBatch(l.End(), 3, 100, ts)); err != nil {
			t.Fatal(err)
		}
		if i == 7 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, seg := range []base.Offset{0, 24} {
		for _, suffix := range []string{indexSuffix, timeIndexSuffix} {
			r, err := InspectIndex(segFile(o, seg, suffix))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Entries) == 0 || len(r.Problems) != 0 || r.Time != (suffix == timeIndexSuffix) || r.Batches == 0 {
				t.Errorf("segment %d%s: %+v, want entries and no problem", seg, suffix, r)
			}
		}
	}

	// Point the offset index's first entry one byte further.
	path := segFile(o, 0, indexSuffix)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[4:], binary.BigEndian.Uint32(b[4:])+1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := InspectIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "not the start of a batch") {
		t.Errorf("a moved entry: problems %q, want one", r.Problems)
	}

	for _, bad := range []string{segFile(o, 0, logSuffix), o.Dir + "/notes.index"} {
		if _, err := InspectIndex(bad); err == nil || !strings.Contains(err.Error(), "is not a segment's index") {
			t.Errorf("InspectIndex(%s): %v, want not a segment's index", bad, err)
		}
	}
	if !slices.Contains(dirNames(t, o.Dir), "00000000000000000024.timeindex") {
		t.Fatal("the test's second segment is not at 24")
	}
}

// TestSegmentBatches: the batches of a .log up to where recovery would cut:
// a torn batch, a bad CRC, or the zeros filled ahead of the writes.
func TestSegmentBatches(t *testing.T) {
	one, two := makeBatch(0, 2, 10, 5), makeBatch(2, 1, 10, 6)
	whole := append(slices.Clone(one), two...)
	badCRC := slices.Clone(whole)
	badCRC[len(badCRC)-1] ^= 1
	for _, tc := range []struct {
		name string
		data []byte
		want int
	}{
		{"whole", whole, 2},
		{"empty", nil, 0},
		{"torn last batch", whole[:len(whole)-1], 1},
		{"torn header", append(slices.Clone(one), two[:20]...), 1},
		{"bad CRC", badCRC, 1},
		{"zero-filled tail", append(slices.Clone(whole), make([]byte, 4096)...), 2},
	} {
		got := segmentBatches(tc.data)
		if len(got) != tc.want {
			t.Errorf("%s: %d batches %+v, want %d", tc.name, len(got), got, tc.want)
			continue
		}
		if len(got) > 1 && (got[1].Position != int64(len(one)) || got[1].BaseOffset != 2 || got[1].MaxTimestamp != 6) {
			t.Errorf("%s: second batch %+v", tc.name, got[1])
		}
	}
}
