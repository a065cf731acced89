package log

import (
	"errors"
	"maps"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/vfs"
)

// TestSyncToWaitsOnlyForItsOwnOffsets pins group commit for pipelined
// producers: a caller waiting for offsets that the running round covers
// returns when that round ends, even if more was appended after the round
// started. Waiting for the log end instead made every pipelined produce
// request pay for one more fdatasync round.
func TestSyncToWaitsOnlyForItsOwnOffsets(t *testing.T) {
	var (
		l         *Log
		logSyncs  atomic.Int32
		hookArmed atomic.Bool
		second    = make(chan error, 1)
	)
	o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		if op != vfs.OpDatasync || filepath.Ext(path) != ".log" {
			return nil
		}
		logSyncs.Add(1)
		if hookArmed.CompareAndSwap(true, false) {
			// Inside the first round, which covers only batch A: batch B
			// is appended, and a second caller waits for A alone.
			if err := appendBatches(1)(l); err != nil {
				return err
			}
			go func() { second <- l.SyncTo(1) }()
		}
		return nil
	}))
	l = mustOpen(t, o)
	defer l.Close()
	if err := appendBatches(1)(l); err != nil { // batch A: offset 0
		t.Fatal(err)
	}
	hookArmed.Store(true)
	if err := l.SyncTo(1); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := logSyncs.Load(); got != 1 {
		t.Fatalf("%d fdatasync rounds for offsets one round covered; want 1", got)
	}
	if l.DurableEnd() != 1 || l.End() != 2 {
		t.Fatalf("DurableEnd %d End %d, want 1 and 2", l.DurableEnd(), l.End())
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if l.DurableEnd() != 2 || logSyncs.Load() != 2 {
		t.Fatalf("after Sync: DurableEnd %d after %d rounds, want 2 after 2", l.DurableEnd(), logSyncs.Load())
	}
}

// TestOnSyncHearsEachRound: OnSync hears each fdatasync round that ran,
// with the time it took by the log's clock, and neither a SyncTo that had
// nothing to wait for nor a round that failed.
func TestOnSyncHearsEachRound(t *testing.T) {
	var (
		clk   *clock.Manual
		fail  atomic.Bool
		heard []time.Duration
	)
	o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		if op != vfs.OpDatasync || filepath.Ext(path) != ".log" {
			return nil
		}
		clk.Advance(3 * time.Millisecond) // the disk is slow
		if fail.Load() {
			return errors.New("injected: fdatasync failed")
		}
		return nil
	}))
	clk = o.Clock.(*clock.Manual)
	o.OnSync = func(d time.Duration) { heard = append(heard, d) }
	l := mustOpen(t, o)
	defer l.Close()
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil { // nothing new: no round
		t.Fatal(err)
	}
	if len(heard) != 1 || heard[0] != 3*time.Millisecond {
		t.Fatalf("heard %v after one round of one .log fdatasync, want [3ms]", heard)
	}
	fail.Store(true)
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err == nil {
		t.Fatal("Sync succeeded over a failing fdatasync")
	}
	if len(heard) != 1 {
		t.Fatalf("heard %v: a failed round was reported", heard)
	}
}

// TestOneSyncRoundAtATime: a caller that comes to lead a round while
// another runs (it saw none, then lost the race for mu) leaves it alone:
// no second fdatasync runs beside the first, and the running round's
// waiters keep their channel.
func TestOneSyncRoundAtATime(t *testing.T) {
	var syncs atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		if op == vfs.OpDatasync && filepath.Ext(path) == ".log" && syncs.Add(1) == 1 {
			close(entered)
			<-release
		}
		return nil
	}))
	l := mustOpen(t, o)
	defer l.Close()
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- l.Sync() }()
	<-entered
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	running := l.mu.syncing
	l.mu.Unlock()
	if err := l.leadSyncRound(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	still := l.mu.syncing
	l.mu.Unlock()
	if n := syncs.Load(); n != 1 || still != running {
		t.Errorf("a second leader ran %d .log fdatasyncs beside the running round (its channel kept: %v), want 1", n, still == running)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil || l.DurableEnd() != l.End() {
		t.Fatalf("Sync = %v, durable to %d of %d", err, l.DurableEnd(), l.End())
	}
}

// TestASyncRoundRepeatsNoDurableWork: a round after the one that made a
// roll durable (the sealed segment's index files, the directory, the
// recovery point) fdatasyncs the active .log alone.
func TestASyncRoundRepeatsNoDurableWork(t *testing.T) {
	var mu sync.Mutex
	ops := map[string]int{}
	o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		if op.IsSync() || op == vfs.OpRename {
			mu.Lock()
			ops[op.String()+" "+filepath.Ext(path)]++
			mu.Unlock()
		}
		return nil
	}))
	l := mustOpen(t, o)
	defer l.Close()
	for _, step := range []func(*Log) error{appendBatches(1), (*Log).Roll, appendBatches(1), (*Log).Sync} {
		if err := step(l); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	clear(ops)
	mu.Unlock()
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := map[string]int{"datasync .log": 1}; !maps.Equal(ops, want) {
		t.Fatalf("the round after a durable roll ran %v, want %v", ops, want)
	}
}
