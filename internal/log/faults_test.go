package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// faultCalls is a life of a log after Open; every call may fail.
var faultCalls = []struct {
	name string
	do   func(l *Log) error
}{
	{"Append", appendBatches(2)},
	{"Sync", (*Log).Sync},
	{"Append rolling", appendBatches(8)},
	{"Sync", (*Log).Sync},
	{"Roll", (*Log).Roll},
	{"Append", appendBatches(3)},
	{"TruncateTo", func(l *Log) error { return l.TruncateTo(l.End() - 2) }},
	{"Append", appendBatches(2)},
	{"Sync", (*Log).Sync},
	{"DeleteSegmentsBefore", func(l *Log) error { return l.DeleteSegmentsBefore(l.End()) }},
	{"Append", appendBatches(1)},
	{"Sync", (*Log).Sync},
	{"Close", (*Log).Close},
}

func appendBatches(n int) func(l *Log) error {
	return func(l *Log) error {
		for i := range n {
			if err := l.Append(makeBatch(l.End(), 1, 100, int64(i))); err != nil {
				return err
			}
		}
		return nil
	}
}

// faultOps are the operations whose failure the log must report.
var faultOps = []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpTruncate, vfs.OpSync, vfs.OpDatasync,
	vfs.OpSyncDir, vfs.OpRename, vfs.OpRemove, vfs.OpStat}

// TestInjectedErrorsFailTheLog fails, one run each, every occurrence of
// every operation in faultOps after Open. The call during which it fails must
// return that error (no silent success), and from then on the log is
// fail-stop: every mutating call fails and DurableEnd does not move.
// Options.OnFail hears the error once.
func TestInjectedErrorsFailTheLog(t *testing.T) {
	counts := map[vfs.Op]int{}
	probe := func(op vfs.Op, _ string) error { counts[op]++; return nil }
	runFaultCalls(t, probe, func(int, error) {})
	for _, op := range faultOps {
		if counts[op] == 0 {
			t.Fatalf("the calls never do %v", op)
		}
		for n := 1; n <= counts[op]; n++ {
			t.Run(fmt.Sprintf("%v_%d", op, n), func(t *testing.T) {
				boom := fmt.Errorf("injected %v #%d", op, n)
				seen, fired := 0, false
				inject := func(o vfs.Op, _ string) error {
					if o == op {
						if seen++; seen == n {
							fired = true
							return boom
						}
					}
					return nil
				}
				failedAt := -1
				heard := runFaultCalls(t, inject, func(i int, err error) {
					switch {
					case failedAt < 0 && fired && err == nil:
						t.Fatalf("%s returned nil after the injected error", faultCalls[i].name)
					case failedAt < 0 && err != nil:
						if !errors.Is(err, boom) {
							t.Fatalf("%s: %v, want the injected error", faultCalls[i].name, err)
						}
						failedAt = i
					case failedAt >= 0 && err == nil && faultCalls[i].name != "Sync":
						t.Fatalf("%s succeeded after %s failed", faultCalls[i].name, faultCalls[failedAt].name)
					}
				})
				if failedAt < 0 {
					t.Fatal("no call failed")
				}
				// Close reports its own error: the log is closed, not failed.
				switch closing := faultCalls[failedAt].name == "Close"; {
				case closing && len(heard) != 0:
					t.Fatalf("OnFail heard %v from Close, want nothing", heard)
				case !closing && (len(heard) != 1 || !errors.Is(heard[0], boom)):
					t.Fatalf("OnFail heard %v after %s failed, want the injected error once", heard, faultCalls[failedAt].name)
				}
			})
		}
	}
}

// runFaultCalls opens a log whose FS calls inject after Open returns, runs
// faultCalls, and reports each call's error to check. Once a call failed, it
// also checks that DurableEnd stays put and Sync fails while anything is
// not durable. It returns what Options.OnFail heard.
func runFaultCalls(t *testing.T, inject func(vfs.Op, string) error, check func(i int, err error)) (heard []error) {
	t.Helper()
	armed := false
	o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		if !armed {
			return nil
		}
		return inject(op, path)
	}))
	o.OnFail = func(err error) { heard = append(heard, err) }
	l := mustOpen(t, o)
	armed = true
	failed, durable := false, base.Offset(0)
	for i, c := range faultCalls {
		err := c.do(l)
		check(i, err)
		if failed && l.DurableEnd() != durable {
			t.Fatalf("DurableEnd moved from %d to %d after the log failed", durable, l.DurableEnd())
		}
		if failed && c.name == "Sync" && err == nil && l.DurableEnd() < l.End() {
			t.Fatalf("Sync succeeded with [%d, %d) not durable after the log failed", l.DurableEnd(), l.End())
		}
		if err != nil && !failed {
			failed, durable = true, l.DurableEnd()
		}
	}
	_ = l.Close()
	return heard
}

// TestSegmentCreatedDuringSyncRoundKeepsDirectoryDirty pins the fix to the
// sync round: a roll that creates a segment file while a round runs (after
// the round's directory fsync) must leave the directory dirty for the next
// round. The round used to clear the flag when it finished.
func TestSegmentCreatedDuringSyncRoundKeepsDirectoryDirty(t *testing.T) {
	var l *Log
	hook := false
	o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		// The round writes the recovery point after its directory fsync.
		if hook && op == vfs.OpCreate && filepath.Base(path) == recoveryPointName+tmpSuffix {
			hook = false
			// A concurrent appender rolls: Roll needs mu, which the round does not hold.
			if err := appendBatches(1)(l); err != nil {
				return err
			}
			return l.Roll()
		}
		return nil
	}))
	l = mustOpen(t, o)
	defer l.Close()
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	hook = true
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if hook {
		t.Fatal("the hook did not run")
	}
	l.mu.Lock()
	dirty := l.mu.dirDirty
	l.mu.Unlock()
	if !dirty {
		t.Fatal("the directory is not dirty after a segment was created during the sync round")
	}
}

// TestReadReportsABatchRunningPastTheSegment: a batch whose length was
// damaged on disk after it was written (so that it runs past the
// segment's data) is reported as ErrCorrupt by Read, not served as an
// empty answer — whether the walk to it starts at its own index entry
// (interval 0) or at an earlier batch's (interval 100: one entry every
// second batch).
func TestReadReportsABatchRunningPastTheSegment(t *testing.T) {
	for _, interval := range []int{0, 100} {
		o := testOptions(t)
		o.IndexIntervalBytes = interval
		l := mustOpen(t, o)
		batches := appendN(t, l, 6, 1, 10, 0)
		at := 0
		for _, b := range batches[:5] {
			at += len(b)
		}
		f, err := os.OpenFile(segFile(o, 0, logSuffix), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		length := binary.BigEndian.AppendUint32(nil, uint32(len(batches[5])-record.LogOverhead+100))
		if _, err := f.WriteAt(length, int64(at+8)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if got, err := l.Read(5, 1<<20, nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("interval %d: Read of the damaged batch: %d bytes, %v; want ErrCorrupt", interval, len(got), err)
		}
		l.Close()
	}
}
