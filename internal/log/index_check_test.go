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
		if _, err := InspectIndex(bad); err == nil {
			t.Errorf("InspectIndex(%s) succeeded", bad)
		}
	}
	if !slices.Contains(dirNames(t, o.Dir), "00000000000000000024.timeindex") {
		t.Fatal("the test's second segment is not at 24")
	}
}
