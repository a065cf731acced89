package log

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// TestParseSegmentName: only 20 decimal digits of a non-negative offset
// and a segment file's suffix name a segment file; Open ignores the rest.
func TestParseSegmentName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		base   base.Offset
		suffix string
		ok     bool
	}{
		{name: "00000000000000000042.log", base: 42, suffix: logSuffix, ok: true},
		{name: "00000000000000000000.index", suffix: indexSuffix, ok: true},
		{name: "09223372036854775807.timeindex", base: math.MaxInt64, suffix: timeIndexSuffix, ok: true},
		{name: "00000000000000000042"},
		{name: "0000000000000000042.log"},          // 19 digits
		{name: "00000000000000000042.log.deleted"}, // a leftover, not a segment
		{name: "00000000000000000042.txt"},
		{name: "0000000000000000004x.log"},
		{name: "-0000000000000000001.log"},
		{name: "+0000000000000000001.log"},
		{name: "99999999999999999999.log"}, // past int64
	} {
		b, suffix, ok := parseSegmentName(tc.name)
		if b != tc.base || suffix != tc.suffix || ok != tc.ok {
			t.Errorf("parseSegmentName(%q) = %d, %q, %v; want %d, %q, %v", tc.name, b, suffix, ok, tc.base, tc.suffix, tc.ok)
		}
	}
	if got := segmentPath("d", 42, logSuffix); got != "d/00000000000000000042.log" {
		t.Errorf("segmentPath = %q", got)
	}
}

// TestOpenIgnoresANameWithASign: a file that looks like a segment but for
// a sign is not one; before, Open took it for segment 1 and failed to
// find 00000000000000000001.log.
func TestOpenIgnoresANameWithASign(t *testing.T) {
	o := testOptions(t)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "+0000000000000000001.log"), makeBatch(1, 1, 10, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, o)
	defer l.Close()
	if segs := l.Segments(); len(segs) != 1 || segs[0].BaseOffset != 0 || l.End() != 0 {
		t.Fatalf("segments %+v, End %d: want one empty segment at 0", segs, l.End())
	}
}
