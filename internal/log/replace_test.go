package log

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

func gapOptions(t *testing.T) Options {
	o := testOptions(t)
	o.IndexIntervalBytes = 100 // an index entry every other batch or so
	return o
}

// TestGapReadsEveryOffset: after compaction left gaps (inside segments,
// at their ends, a whole empty segment, at the start of a merged one),
// every read path serves, at every offset, the first batch whose last
// offset is at or after it, also after a clean or unclean reopen, without a
// recovery point, and with the index files to rebuild.
func TestGapReadsEveryOffset(t *testing.T) {
	for _, tc := range []struct {
		name       string
		clean      bool
		noRP       bool
		noIndexes  bool
		noReopen   bool
		wantLayout []base.Offset
	}{
		{name: "live", noReopen: true},
		{name: "clean"},
		{name: "crashed"},
		{name: "crashed_without_recovery_point", noRP: true},
		{name: "clean_without_indexes", clean: true, noIndexes: true},
		{name: "crashed_without_indexes", noIndexes: true},
		{name: "crashed_without_indexes_or_recovery_point", noIndexes: true, noRP: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := buildGapLog(t, gapOptions(t))
			l := g.l
			if !tc.noReopen {
				l.stop(t, tc.clean)
				if tc.noRP {
					if err := os.Remove(filepath.Join(g.o.Dir, recoveryPointName)); err != nil {
						t.Fatal(err)
					}
				}
				if tc.noIndexes {
					removeIndexFiles(t, g.o.Dir)
				}
				l = mustOpen(t, g.o)
			}
			defer l.Close()
			var bases []base.Offset
			for _, s := range l.Segments() {
				bases = append(bases, s.BaseOffset)
			}
			if want := []base.Offset{0, 12, 24, 36, 60}; !equalOffsets(bases, want) {
				t.Fatalf("segments start at %v, want %v", bases, want)
			}
			if s := l.Segments()[3]; s.NextOffset != 60 || s.Active {
				t.Fatalf("merged segment %+v, want [36, 60) sealed", s)
			}
			if s := l.Segments()[2]; s.NextOffset != 36 || s.SizeBytes != 0 || s.HasTimestamp {
				t.Fatalf("emptied segment %+v, want [24, 36) with no batch", s)
			}
			checkGapReads(t, l, g.model, true)
			b := makeBatch(l.End(), 1, 10, 2000)
			if err := l.Append(b); err != nil {
				t.Fatal(err)
			}
			checkGapReads(t, l, append(g.model, b), true)
		})
	}
}

func equalOffsets(a, b []base.Offset) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTruncateToInGaps truncates a compacted log at batch starts, in gaps
// and at segment starts: End() becomes the offset asked for, the batches
// below it stay, the log takes appends there and all of it survives a
// clean or unclean reopen.
func TestTruncateToInGaps(t *testing.T) {
	for _, tc := range []struct {
		o          base.Offset
		wantSealed bool // what stays of o's segment stays sealed, ending at o
	}{
		{o: 2},                   // a gap right after a contiguous start: that segment becomes active
		{o: 4, wantSealed: true}, // in the same gap
		{o: 6, wantSealed: true}, // a shrunk batch
		{o: 7, wantSealed: true}, // the gap after it
		{o: 8, wantSealed: true}, // a batch after gaps
		{o: 12},                  // a segment start
		{o: 20},                  // where the data of a segment ends
		{o: 22, wantSealed: true},
		{o: 24},                   // an empty segment's start
		{o: 30, wantSealed: true}, // inside it
		{o: 36},                   // a merged segment's start, in a gap
		{o: 37, wantSealed: true},
		{o: 50, wantSealed: true},
		{o: 59, wantSealed: true},
		{o: 60}, // the active segment
		{o: 64},
	} {
		for _, reopen := range []string{"clean", "crashed"} {
			t.Run(fmtOffset(tc.o)+"/"+reopen, func(t *testing.T) {
				g := buildGapLog(t, gapOptions(t))
				l := g.l
				if err := l.TruncateTo(tc.o); err != nil {
					t.Fatalf("TruncateTo(%d): %v", tc.o, err)
				}
				if l.End() != tc.o || l.DurableEnd() != tc.o {
					t.Fatalf("End %d DurableEnd %d, want %d", l.End(), l.DurableEnd(), tc.o)
				}
				// o's segment becomes the active one, or stays sealed
				// before a new active one at o.
				own := base.Offset(0)
				for _, b := range []base.Offset{12, 24, 36, 60} {
					if b <= tc.o {
						own = b
					}
				}
				segs := l.Segments()
				n := len(segs)
				wantActive := own
				if tc.wantSealed {
					wantActive = tc.o
					if n < 2 || segs[n-2].BaseOffset != own || segs[n-2].NextOffset != tc.o {
						t.Fatalf("segments after TruncateTo(%d): %+v; want [%d, %d) sealed", tc.o, segs, own, tc.o)
					}
				}
				if segs[n-1].BaseOffset != wantActive || !segs[n-1].Active {
					t.Fatalf("segments after TruncateTo(%d): %+v; want the active one at %d", tc.o, segs, wantActive)
				}
				var model [][]byte
				for _, b := range g.model {
					if headerOf(b).BaseOffset < tc.o {
						model = append(model, b)
					}
				}
				checkGapReads(t, l, model, true)
				b := makeBatch(tc.o, 2, 10, 2000)
				if err := l.Append(b); err != nil {
					t.Fatalf("Append at %d after TruncateTo: %v", tc.o, err)
				}
				model = append(model, b)
				checkGapReads(t, l, model, true)
				if err := l.Sync(); err != nil {
					t.Fatal(err)
				}
				l.stop(t, reopen == "clean")
				l = mustOpen(t, g.o)
				defer l.Close()
				checkGapReads(t, l, model, true)
				if err := l.Append(makeBatch(l.End(), 1, 10, 2001)); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	g := buildGapLog(t, gapOptions(t))
	defer g.l.Close()
	for _, o := range []base.Offset{39, 61} {
		if err := g.l.TruncateTo(o); !errors.Is(err, ErrNotBatchBoundary) {
			t.Fatalf("TruncateTo(%d) inside a batch: %v, want ErrNotBatchBoundary", o, err)
		}
	}
}

func fmtOffset(o base.Offset) string { return fmt.Sprintf("at_%d", o) }

// threeSealed is a log of three sealed segments [0,10) [10,20) [20,30) of
// five 2-record batches and an active one [30,32).
func threeSealed(t *testing.T, o Options) (*Log, [][]byte) {
	t.Helper()
	l := mustOpen(t, o)
	var batches [][]byte
	for i := 0; i < 3; i++ {
		batches = append(batches, appendN(t, l, 5, 2, 20, int64(100*i))...)
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	batches = append(batches, appendN(t, l, 1, 2, 20, 500)...)
	return l, batches
}

func TestBeginReplacementRefusals(t *testing.T) {
	l, _ := threeSealed(t, testOptions(t))
	defer l.Close()
	for _, bases := range [][]base.Offset{
		{30},     // the active segment
		{20, 30}, // ... at the end of a group
		{5},      // starts no segment
		{0, 20},  // not consecutive
		{10, 0},
		{},
	} {
		if r, err := l.BeginReplacement(bases); !errors.Is(err, ErrNotSealed) {
			t.Fatalf("BeginReplacement(%v) = %v, %v; want ErrNotSealed", bases, r, err)
		}
	}
	r, err := l.BeginReplacement([]base.Offset{0, 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Range(); got != (base.Range{Start: 0, End: 20}) {
		t.Fatalf("Range() = %v", got)
	}
	if _, err := l.BeginReplacement([]base.Offset{20}); !errors.Is(err, ErrReplacementInProgress) {
		t.Fatalf("second BeginReplacement: %v, want ErrReplacementInProgress", err)
	}
	r.Abort()
	r, err = l.BeginReplacement([]base.Offset{20})
	if err != nil {
		t.Fatalf("BeginReplacement after Abort: %v", err)
	}
	r.Abort()
}

func TestReplacementAppendChecks(t *testing.T) {
	l, batches := threeSealed(t, testOptions(t))
	defer l.Close()
	r, err := l.BeginReplacement([]base.Offset{10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Abort()
	badCRC := bytes.Clone(batches[6])
	badCRC[len(badCRC)-1] ^= 1
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"below the range", batches[4], ErrNotContiguous},
		{"past the range", batches[10], ErrOffsetOutOfRange},
		{"empty", nil, ErrInvalidBatch},
		{"torn", batches[6][:30], ErrInvalidBatch},
		{"bad CRC", badCRC, ErrInvalidBatch},
		{"descending", concat([][]byte{batches[7], batches[6]}), ErrNotContiguous},
		{"overlapping", concat([][]byte{batches[6], makeBatch(13, 1, 1, 0)}), ErrNotContiguous},
	} {
		if err := r.Append(tc.b); !errors.Is(err, tc.want) {
			t.Fatalf("Append(%s) = %v, want %v", tc.name, err, tc.want)
		}
	}
	// Refused batches left nothing behind.
	if err := r.Append(concat([][]byte{batches[6], batches[8]})); err != nil {
		t.Fatal(err)
	}
	if err := r.Append(batches[7]); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("Append of a batch below the last one: %v", err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err == nil {
		t.Fatal("second Commit succeeded")
	}
	if err := r.Append(batches[9]); err == nil {
		t.Fatal("Append after Commit succeeded")
	}
	r.Abort() // no-op
	want := concat(append(append(slices.Clone(batches[:5]), batches[6], batches[8]), batches[10:]...))
	if got := concat(readBatches(t, l)); !bytes.Equal(got, want) {
		t.Fatal("log after the replacement differs")
	}
}

// TestReplacementMergesSegments: several segments become one, which keeps
// their range, their newest modification time and their max timestamp,
// and the log survives a reopen.
func TestReplacementMergesSegments(t *testing.T) {
	o := testOptions(t)
	l, batches := threeSealed(t, o)
	before := l.Segments()
	r, err := l.BeginReplacement([]base.Offset{0, 10, 20})
	if err != nil {
		t.Fatal(err)
	}
	kept := [][]byte{batches[1], batches[7], batches[13]}
	for _, b := range kept {
		if err := r.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	if len(segs) != 2 {
		t.Fatalf("segments %+v, want the merged one and the active one", segs)
	}
	m := segs[0]
	if m.BaseOffset != 0 || m.NextOffset != 30 || m.SizeBytes != int64(len(concat(kept))) ||
		m.MaxTimestamp != 203 || m.LargestTimeAt != 26 || !m.LastModified.Equal(before[2].LastModified) {
		t.Fatalf("merged segment %+v", m)
	}
	want := append(kept, batches[15])
	checkGapReads(t, l, want, true)
	for _, n := range dirNames(t, o.Dir) {
		if b, suffix, ok := parseSegmentName(n); !ok || (b != 0 && b != 30) {
			if n != recoveryPointName {
				t.Errorf("unexpected file %s (suffix %q)", n, suffix)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	checkGapReads(t, l, want, true)
}

// TestReplacementStale: a replacement whose segments retention deleted or
// a truncation cut, or whose log closed, is dropped by Commit with
// ErrReplacementStale, leaving the log and its directory as they were; a
// truncation above the replaced segments does not make it stale.
func TestReplacementStale(t *testing.T) {
	for _, tc := range []struct {
		name  string
		act   func(l *Log) error
		stale bool
	}{
		{"deleted", func(l *Log) error { return l.DeleteSegmentsBefore(10) }, true},
		{"deleted_later_one", func(l *Log) error { return l.DeleteSegmentsBefore(20) }, true},
		{"truncated_inside", func(l *Log) error { return l.TruncateTo(16) }, true},
		{"truncated_below", func(l *Log) error { return l.TruncateTo(4) }, true},
		{"successor_truncated", func(l *Log) error { return l.TruncateTo(20) }, false},
		{"closed", func(l *Log) error { return l.Close() }, true},
		{"truncated_above", func(l *Log) error { return l.TruncateTo(30) }, false},
		{"untouched", func(l *Log) error { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t)
			l, batches := threeSealed(t, o)
			defer l.Close()
			r, err := l.BeginReplacement([]base.Offset{0, 10})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Abort()
			if err := r.Append(concat([][]byte{batches[2], batches[9]})); err != nil {
				t.Fatal(err)
			}
			if err := tc.act(l); err != nil {
				t.Fatal(err)
			}
			var before []byte
			if tc.name != "closed" {
				before = concat(readBatches(t, l))
			}
			err = r.Commit()
			if !tc.stale {
				if err != nil {
					t.Fatalf("Commit: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrReplacementStale) {
				t.Fatalf("Commit = %v, want ErrReplacementStale", err)
			}
			for _, n := range dirNames(t, o.Dir) {
				if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) || strings.HasSuffix(n, deletedSuffix) {
					t.Errorf("stale replacement left %s", n)
				}
			}
			if tc.name != "closed" {
				if got := concat(readBatches(t, l)); !bytes.Equal(got, before) {
					t.Fatal("a stale Commit changed the log")
				}
				r2, err := l.BeginReplacement([]base.Offset{l.Start()})
				if err != nil && !errors.Is(err, ErrNotSealed) {
					t.Fatalf("BeginReplacement after a stale one: %v", err)
				}
				if err == nil {
					r2.Abort()
				}
			}
		})
	}
}

// TestReplacementAbort: an aborted replacement leaves no file and no trace
// in the log.
func TestReplacementAbort(t *testing.T) {
	o := testOptions(t)
	l, batches := threeSealed(t, o)
	defer l.Close()
	r, err := l.BeginReplacement([]base.Offset{10})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Append(batches[5]); err != nil {
		t.Fatal(err)
	}
	if !exists(segFile(o, 10, ".log.cleaned")) {
		t.Fatal("no .cleaned file while writing")
	}
	r.Abort()
	r.Abort()
	if exists(segFile(o, 10, ".log.cleaned")) {
		t.Fatal(".cleaned file left after Abort")
	}
	if err := r.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	if got := concat(readBatches(t, l)); !bytes.Equal(got, concat(batches)) {
		t.Fatal("Abort changed the log")
	}
}

// TestReplacementKeepsDuplicatedDescriptors: a fetch being sent and an
// upload being read keep the old bytes after the swap closed the files.
func TestReplacementKeepsDuplicatedDescriptors(t *testing.T) {
	l, batches := threeSealed(t, testOptions(t))
	defer l.Close()
	region, err := l.ReadRegion(10, l.End(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := l.SealedSegment(10)
	if err != nil {
		t.Fatal(err)
	}
	defer sealed.File.Close()
	replaceWith(t, l, []base.Offset{0, 10}, [][]byte{batches[3]}, false)
	if got := readRegion(t, region); !bytes.Equal(got, concat(batches[5:10])) {
		t.Fatal("region read after the swap differs")
	}
	got := make([]byte, sealed.Info.SizeBytes)
	if _, err := sealed.File.ReadAt(got, 0); err != nil || !bytes.Equal(got, concat(batches[5:10])) {
		t.Fatalf("sealed segment read after the swap: %v", err)
	}
}

// TestReplacementFailures: a failure before the commit point leaves the
// log usable and unchanged; one after it fails the log, and Open finishes
// the swap.
func TestReplacementFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failOp   vfs.Op
		failPath string
		failLog  bool
		swapped  bool // Open finds the copy in place
	}{
		{"fdatasync_of_the_copy", vfs.OpDatasync, ".log.cleaned", false, false},
		{"index_fsync", vfs.OpSync, ".index.swap", false, false},
		{"commit_rename", vfs.OpRename, ".log.cleaned", true, false},
		{"rename_to_deleted", vfs.OpRename, "00000000000000000010.timeindex", true, true},
		{"rename_into_place", vfs.OpRename, ".log.swap", true, true},
		{"unlink", vfs.OpRemove, ".log.deleted", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			armed := false
			boom := errors.New("injected")
			o := crashOptions(vfs.NewFaulty(mem, func(op vfs.Op, path string) error {
				if armed && op == tc.failOp && strings.HasSuffix(path, tc.failPath) {
					armed = false
					return boom
				}
				return nil
			}))
			o.SegmentBytes = 1 << 20
			l, batches := threeSealed(t, o)
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			r, err := l.BeginReplacement([]base.Offset{0, 10})
			if err != nil {
				t.Fatal(err)
			}
			kept := [][]byte{batches[1], batches[6]}
			if err := r.Append(concat(kept)); err != nil {
				t.Fatal(err)
			}
			armed = true
			if err := r.Commit(); !errors.Is(err, boom) {
				t.Fatalf("Commit = %v, want the injected error", err)
			}
			r.Abort()
			old, compacted := concat(batches), concat(append(kept, batches[10:]...))
			if err := l.Append(makeBatch(l.End(), 1, 1, 0)); (err != nil) != tc.failLog {
				t.Fatalf("Append after the failed Commit: %v; want the log failed: %v", err, tc.failLog)
			}
			if !tc.failLog {
				if got := concat(readBatches(t, l)); !bytes.Equal(got[:len(old)], old) {
					t.Fatal("a Commit that failed before its commit point changed the log")
				}
				for _, n := range memNames(t, mem, o.Dir) {
					if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
						t.Errorf("failed replacement left %s", n)
					}
				}
				l.Close()
				return
			}
			l.Close()
			o.FS = mem
			l = mustOpen(t, o)
			defer l.Close()
			want := old
			if tc.swapped {
				want = compacted
			}
			if got := concat(readBatches(t, l)); !bytes.Equal(got, want) {
				t.Fatalf("after the failed Commit and Open: %d bytes, want %d (compacted: %v)", len(got), len(want), tc.swapped)
			}
		})
	}
}

func memNames(t *testing.T, fsys vfs.FS, dir string) []string {
	t.Helper()
	es, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}
