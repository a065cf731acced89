package log

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// TruncateFullyAndStartAt leaves an empty log at o, wherever o is against
// the old range, that takes appends at o, survives a clean reopen and an
// unclean one, and leaves no file of the old segments behind.
func TestTruncateFullyAndStartAt(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   base.Offset
	}{
		{"past the end", 100},
		{"at the end", 12},
		{"inside a segment", 5},
		{"at a segment base", 6},
		{"at the start", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t)
			o.SegmentBytes = 300
			l := mustOpen(t, o)
			appendN(t, l, 12, 1, 60, 1)
			if len(l.Segments()) < 3 {
				t.Fatalf("want several segments, have %d", len(l.Segments()))
			}
			if err := l.TruncateFullyAndStartAt(tc.at); err != nil {
				t.Fatal(err)
			}
			check := func(l *Log, when string, held []byte) {
				t.Helper()
				if l.Start() != tc.at || l.DurableEnd() != l.End() {
					t.Fatalf("%s: [%d, %d) durable to %d, want start %d", when, l.Start(), l.End(), l.DurableEnd(), tc.at)
				}
				if got := readAll(t, l); !bytes.Equal(got, held) {
					t.Fatalf("%s: %d bytes, want %d", when, len(got), len(held))
				}
				checkContiguousSegs(t, l.Segments())
			}
			check(l, "after", nil)
			want := []string{filepath.Base(segFile(o, tc.at, logSuffix)), filepath.Base(segFile(o, tc.at, indexSuffix)),
				filepath.Base(segFile(o, tc.at, timeIndexSuffix)), recoveryPointName}
			slices.Sort(want)
			if names := dirNames(t, o.Dir); !slices.Equal(names, want) {
				t.Fatalf("directory holds %v, want %v", names, want)
			}
			b := appendN(t, l, 2, 1, 60, 50)
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			check(l, "appended", concat(b))
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = mustOpen(t, o)
			check(l, "reopened", concat(b))
			more := appendN(t, l, 1, 1, 60, 60)
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			l.crash()
			l = mustOpen(t, o)
			defer l.Close()
			check(l, "recovered", concat(append(b, more...)))
		})
	}
}

func TestTruncateFullyAndStartAtRefusesNegative(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	appendN(t, l, 2, 1, 10, 1)
	if err := l.TruncateFullyAndStartAt(-1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("got %v, want ErrOffsetOutOfRange", err)
	}
	if l.End() != 2 {
		t.Fatalf("the log changed: end %d", l.End())
	}
}

// A Replacement begun before TruncateFullyAndStartAt is stale at Commit.
func TestTruncateFullyAndStartAtMakesReplacementStale(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 300
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 12, 1, 60, 1)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	r, err := l.BeginReplacement([]base.Offset{segs[0].BaseOffset})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Abort()
	if err := l.TruncateFullyAndStartAt(40); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); !errors.Is(err, ErrReplacementStale) {
		t.Fatalf("Commit after TruncateFullyAndStartAt: %v, want ErrReplacementStale", err)
	}
	if l.Start() != 40 || l.End() != 40 {
		t.Fatalf("log [%d, %d), want empty at 40", l.Start(), l.End())
	}
}

// A crash before every operation of a TruncateFullyAndStartAt (and of the
// appends around it) leaves, after Open, either the old log with all it
// acknowledged, or the new one at the new offset with all it
// acknowledged; never a mix, never a log starting elsewhere.
func TestTruncateFullyAndStartAtCrashAtEverySyncPoint(t *testing.T) {
	const at = 100
	type outcome struct {
		old, new []byte
		oldAcked base.Offset // end of the old log's acknowledged part
		newAcked base.Offset // the same for the new log, once it exists
		started  bool        // TruncateFullyAndStartAt was called
		done     bool        // ... and returned
	}
	run := func(o Options) *outcome {
		out := &outcome{}
		l, err := Open(o)
		if err != nil {
			return out
		}
		for range 2 {
			for range 3 {
				b := makeBatch(l.End(), 1, 90, 1)
				out.old = append(out.old, b...)
				if l.Append(b) != nil {
					return out
				}
			}
			if l.Sync() != nil {
				return out
			}
			out.oldAcked = l.DurableEnd()
		}
		out.started = true
		if l.TruncateFullyAndStartAt(at) != nil {
			return out
		}
		out.done, out.newAcked = true, at
		for range 2 {
			b := makeBatch(l.End(), 1, 90, 2)
			out.new = append(out.new, b...)
			if l.Append(b) != nil || l.Sync() != nil {
				return out
			}
			out.newAcked = l.DurableEnd()
		}
		return out
	}
	probe := &crasher{mem: vfs.NewMem()}
	run(crashOptions(vfs.NewFaulty(probe.mem, probe.inject)))
	eachCrashPoint(t, probe, func(t *testing.T, c *crasher) {
		out := run(crashOptions(vfs.NewFaulty(c.mem, c.inject)))
		o := crashOptions(c.afterCrash())
		l, err := Open(o)
		if err != nil {
			t.Fatalf("Open after crash: %v", err)
		}
		start, end := l.Start(), l.End()
		got := readAll(t, l)
		switch {
		case start == at:
			if !out.started {
				t.Fatalf("the log starts at %d before TruncateFullyAndStartAt was called", at)
			}
			if end < out.newAcked || !bytes.HasPrefix(out.new, got) {
				t.Fatalf("new log [%d, %d): want a prefix of the appended data holding [%d, %d)", start, end, at, out.newAcked)
			}
		case start == 0:
			if out.done {
				t.Fatal("the old log came back after TruncateFullyAndStartAt returned")
			}
			if end < out.oldAcked || !bytes.HasPrefix(out.old, got) {
				t.Fatalf("old log [0, %d): want a prefix of the appended data holding [0, %d)", end, out.oldAcked)
			}
		default:
			t.Fatalf("recovered log [%d, %d): starts neither at 0 nor at %d", start, end, at)
		}
		checkUsableAfterRecovery(t, l, o, got)
	})
}
