package partition

import (
	"sync"
	"testing"
)

// Flush on a closed partition is not an error. (Flush compared the log's
// error with the partition's ErrClosed; a closed log answers log.ErrClosed
// only after a failed Close, which this test cannot provoke.)
func TestFlushAfterCloseIsNil(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, spec{}), AcksLeader)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatalf("Flush after Close: %v", err)
	}
}

// Regression: Close replaced the Changed channel with a new one that was
// never closed, so a long-poll that asked after Close waited its full time.
func TestChangedIsClosedAfterClose(t *testing.T) {
	p := newEnv(t).open(t)
	before := p.Changed()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan struct{}{before, p.Changed()} {
		select {
		case <-ch:
		default:
			t.Fatal("Changed channel still open after Close")
		}
	}
}

// Regression: SetConfig ignored the log's refusal of a configuration and
// kept it anyway, so the partition and its log disagreed.
func TestSetConfigRefusesInvalid(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	bad := e.opts.Config
	bad.SegmentIndexBytes = 1
	if err := p.SetConfig(bad); err == nil {
		t.Fatal("SetConfig accepted a segment.index.bytes of 1")
	}
	p.mu.Lock()
	got := p.mu.cfg
	p.mu.Unlock()
	if got != e.opts.Config {
		t.Fatalf("config changed to %+v by a refused SetConfig", got)
	}
}

// Concurrent producers rolling segments write snapshots concurrently with
// each other and with Close; every acknowledged batch survives, and the
// duplicate window of each producer is restored.
func TestConcurrentAppendsWithRolls(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	const producers, batches = 4, 30
	var wg sync.WaitGroup
	for pid := range producers {
		wg.Go(func() {
			for seq := range batches {
				if _, _, err := p.Append(batch(t, spec{pid: int64(pid + 1), seq: int32(seq), valueBytes: 150}), AcksLeader); err != nil {
					t.Errorf("producer %d: %v", pid+1, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			if _, err := p.Read(0, 4096, nil); err != nil {
				t.Errorf("Read: %v", err)
				return
			}
		}
	})
	wg.Wait()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if end := p.Offsets().LogEnd; end != producers*batches {
		t.Fatalf("log end %d, want %d", end, producers*batches)
	}
	for pid := range producers {
		res := mustAppend(t, p, batch(t, spec{pid: int64(pid + 1), seq: batches - 1, valueBytes: 150}), AcksLeader)
		if !res.Duplicate {
			t.Fatalf("producer %d: last batch not a duplicate after reopen", pid+1)
		}
	}
	if n := len(snapshotFiles(t, e.dir)); n > snapshotsKept {
		t.Fatalf("%d snapshots left", n)
	}
}
