package log

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestSyncOrderGolden pins the exact order of the operations that decide
// what survives a crash (creates, truncations, syncs, renames, removes) for
// a short life of a log. A change to it must be deliberate: review the diff
// of testdata/sync_order.golden against DESIGN.md §3 and STYLE.md habit 10,
// then rerun with -update.
func TestSyncOrderGolden(t *testing.T) {
	var out strings.Builder
	mem := vfs.NewMem()
	o := crashOptions(nil)
	o.FS = vfs.NewFaulty(mem, func(op vfs.Op, path string) error {
		switch op {
		case vfs.OpCreate, vfs.OpTruncate, vfs.OpSync, vfs.OpDatasync, vfs.OpSyncDir,
			vfs.OpRename, vfs.OpRemove, vfs.OpRemoveAll, vfs.OpMkdirAll:
			fmt.Fprintf(&out, "  %-9s %s\n", op, relPath(o.Dir, path))
		}
		return nil
	})
	step := func(name string, f func() error) {
		t.Helper()
		fmt.Fprintf(&out, "%s\n", name)
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var l *Log
	open := func() (err error) { l, err = Open(o); return err }
	appendThree := func() error { appendN(t, l, 3, 1, 50, 0); return nil }
	step("Open (new log)", open)
	step("Append [0, 3)", appendThree)
	step("Sync", func() error { return l.Sync() })
	step("Roll", func() error { return l.Roll() })
	step("Append [3, 6)", appendThree)
	step("Sync", func() error { return l.Sync() })
	step("DeleteSegmentsBefore(3)", func() error { return l.DeleteSegmentsBefore(3) })
	step("TruncateTo(4)", func() error { return l.TruncateTo(4) })
	step("Close", func() error { return l.Close() })
	step("Open (clean)", open)
	step("Close", func() error { return l.Close() })

	path := filepath.Join("testdata", "sync_order.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if out.String() != string(want) {
		t.Fatalf("operation order changed; rerun with -update if deliberate.\ngot:\n%s\nwant:\n%s", out.String(), want)
	}
}

// relPath shows path relative to the log directory.
func relPath(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}

// crashWorkload appends, syncs, rolls, truncates into an earlier segment,
// deletes, closes and reopens.
var crashWorkload = []step{
	{kind: stepAppend, n: 4, recs: 2, valueBytes: 40},
	{kind: stepFill}, // zeros past the data, up to the segment size
	{kind: stepSync},
	{kind: stepAppend, n: 6, recs: 1, valueBytes: 60}, // into the zeros; rolls on size
	{kind: stepSync},
	{kind: stepFill},
	{kind: stepRoll}, // cuts the zeros off the sealed segment
	{kind: stepAppend, n: 3, recs: 3, valueBytes: 20},
	{kind: stepSync},
	{kind: stepAppend, n: 3, recs: 1, valueBytes: 30}, // never synced
	{kind: stepFill},
	{kind: stepTruncate, pct: 40}, // into an earlier segment
	{kind: stepAppend, n: 4, recs: 2, valueBytes: 50},
	{kind: stepSync},
	{kind: stepDelete, pct: 50},
	{kind: stepAppend, n: 2, recs: 1, valueBytes: 10},
	{kind: stepFill},
	{kind: stepSync},
	{kind: stepReopen}, // Close cuts the zeros off
	{kind: stepAppend, n: 5, recs: 1, valueBytes: 90},
	{kind: stepTruncate, pct: 90},
	{kind: stepSync},
	{kind: stepReopen},
	{kind: stepAppend, n: 2, recs: 1, valueBytes: 10}, // lost or kept at the final crash
}

// TestCrashAtEverySyncPoint runs crashWorkload once per crash point k,
// crashing right before the k-th operation that makes something durable or
// changes the directory (Open's recovery included), with and without torn
// unsynced state, and checks what a reopen finds.
func TestCrashAtEverySyncPoint(t *testing.T) {
	probe := &crasher{mem: vfs.NewMem()}
	runWorkload(t, crashOptions(vfs.NewFaulty(probe.mem, probe.inject)), crashWorkload, &crashModel{})
	if probe.points < 40 {
		t.Fatalf("only %d crash points; the workload does less than intended", probe.points)
	}
	eachCrashPoint(t, probe, func(t *testing.T, c *crasher) {
		var m crashModel
		runWorkload(t, crashOptions(vfs.NewFaulty(c.mem, c.inject)), crashWorkload, &m)
		checkRecovered(t, crashOptions(nil), c.afterCrash(), &m)
	})
}

// gapWorkload is a follower's life on a compacted topic: its leader's
// batches with gaps between them (AppendReplicated), the first past the
// segment's base, rolls on size across a gap (the new segment starts at
// the batch), a gap past the reach of a segment's index (a roll), a
// leader's contiguous appends in between, truncations into gaps, syncs
// and a reopen.
var gapWorkload = []step{
	{kind: stepAppendGaps, n: 3, recs: 2, valueBytes: 40, gap: 3},
	{kind: stepSync},
	{kind: stepAppendGaps, n: 6, recs: 1, valueBytes: 60, gap: 2}, // rolls on size
	{kind: stepFill},
	{kind: stepSync},
	{kind: stepAppend, n: 2, recs: 1, valueBytes: 30},
	{kind: stepAppendGaps, n: 1, recs: 1, valueBytes: 10, gap: math.MaxUint32 + 5}, // rolls
	{kind: stepAppendGaps, n: 2, recs: 2, valueBytes: 20, gap: 1},                  // never synced
	{kind: stepTruncateGap, pct: 90},                                               // into the gap after the roll
	{kind: stepAppendGaps, n: 2, recs: 1, valueBytes: 50, gap: 4},
	{kind: stepSync},
	{kind: stepTruncateGap, pct: 99}, // End past the data
	{kind: stepReopen},               // Close keeps that End
	{kind: stepAppendGaps, n: 2, recs: 1, valueBytes: 10, gap: 1}, // lost or kept at the final crash
}

// TestCrashAtEverySyncPointWithGaps is TestCrashAtEverySyncPoint for
// gapWorkload: recovery keeps the gaps, cuts only what a crash tore, and
// loses nothing that Sync acknowledged.
func TestCrashAtEverySyncPointWithGaps(t *testing.T) {
	probe := &crasher{mem: vfs.NewMem()}
	var pm crashModel
	runWorkload(t, crashOptions(vfs.NewFaulty(probe.mem, probe.inject)), gapWorkload, &pm)
	if probe.points < 40 || pm.truncatedTo == 0 || pm.end() < math.MaxUint32 {
		t.Fatalf("%d crash points, truncated to %d, end %d; the workload does less than intended", probe.points, pm.truncatedTo, pm.end())
	}
	eachCrashPoint(t, probe, func(t *testing.T, c *crasher) {
		var m crashModel
		runWorkload(t, crashOptions(vfs.NewFaulty(c.mem, c.inject)), gapWorkload, &m)
		checkRecovered(t, crashOptions(nil), c.afterCrash(), &m)
	})
}

// eachCrashPoint runs run once per crash point that probe counted (and
// once past the last), with and without torn unsynced state, in a subtest
// each; run gets a fresh crasher per seed.
func eachCrashPoint(t *testing.T, probe *crasher, run func(t *testing.T, c *crasher)) {
	for k := 1; k <= probe.points+1; k++ {
		for _, torn := range []bool{false, true} {
			name := fmt.Sprintf("before_%d", k)
			if k <= probe.points {
				name += "_" + probe.trace[k-1]
			}
			if torn {
				name += "/torn"
			}
			t.Run(name, func(t *testing.T) {
				seeds := []uint64{0}
				if torn {
					seeds = []uint64{uint64(k), uint64(k) << 20, uint64(k) << 40}
				}
				for _, seed := range seeds {
					run(t, &crasher{mem: vfs.NewMem(), crashAt: k, torn: torn, seed: seed})
				}
			})
		}
	}
}

// afterCrash is the file system as the crash left it, or, past the last
// crash point (the workload ran to its end), as a crash at the end would.
func (c *crasher) afterCrash() *vfs.Mem {
	if c.crashed != nil {
		return c.crashed
	}
	return c.mem.Crash()
}

// TestCrashRecoveryProperty: random workloads and options, a crash at a
// random point with or without torn state, sometimes a second crash during
// the recovery, then the checks of checkRecovered.
func TestCrashRecoveryProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		steps := rapid.SliceOfN(rapid.Custom(drawStep), 1, 30).Draw(t, "steps")
		o := crashOptions(nil)
		o.SegmentBytes = int64(rapid.IntRange(200, 1500).Draw(t, "segmentBytes"))
		o.IndexIntervalBytes = rapid.IntRange(0, 300).Draw(t, "indexIntervalBytes")
		o.SegmentIndexBytes = rapid.IntRange(timeEntrySize, 120).Draw(t, "segmentIndexBytes")
		withFS := func(c *crasher) Options {
			o := o
			o.FS = vfs.NewFaulty(c.mem, c.inject)
			return o
		}

		probe := &crasher{mem: vfs.NewMem()}
		runWorkload(t, withFS(probe), steps, &crashModel{})
		c := &crasher{
			mem:     vfs.NewMem(),
			crashAt: rapid.IntRange(1, probe.points+1).Draw(t, "crashAt"),
			torn:    rapid.Bool().Draw(t, "torn"),
			seed:    rapid.Uint64().Draw(t, "seed"),
		}
		var m crashModel
		runWorkload(t, withFS(c), steps, &m)
		crashed := c.afterCrash()

		if rapid.Bool().Draw(t, "crashDuringRecovery") {
			probe := &crasher{mem: crashed.Crash()} // Crash of a crashed Mem is a copy
			if _, err := Open(withFS(probe)); err != nil {
				t.Fatalf("Open after crash: %v", err)
			}
			c2 := &crasher{
				mem:     crashed.Crash(),
				crashAt: rapid.IntRange(1, probe.points+1).Draw(t, "recoveryCrashAt"),
				torn:    rapid.Bool().Draw(t, "recoveryTorn"),
				seed:    rapid.Uint64().Draw(t, "recoverySeed"),
			}
			if _, err := Open(withFS(c2)); err != nil && c2.crashed == nil {
				t.Fatalf("Open after crash: %v", err)
			}
			if c2.crashed != nil {
				crashed = c2.crashed
			}
		}
		checkRecovered(t, o, crashed, &m)
	})
}

func drawStep(t *rapid.T) step {
	kinds := []stepKind{stepAppend, stepAppend, stepAppend, stepAppend, stepSync, stepSync,
		stepRoll, stepTruncate, stepDelete, stepReopen, stepFill, stepAppendGaps, stepAppendGaps,
		stepTruncateGap}
	return step{
		kind:       rapid.SampledFrom(kinds).Draw(t, "kind"),
		n:          rapid.IntRange(1, 4).Draw(t, "n"),
		recs:       rapid.IntRange(1, 3).Draw(t, "recs"),
		valueBytes: rapid.IntRange(0, 150).Draw(t, "valueBytes"),
		pct:        rapid.IntRange(0, 100).Draw(t, "pct"),
		// Gaps past the reach of a segment's index force a roll.
		gap: rapid.SampledFrom([]base.Offset{0, 1, 3, 10, math.MaxUint32 - 2, math.MaxUint32 + 5}).Draw(t, "gap"),
	}
}
