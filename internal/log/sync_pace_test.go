package log

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/vfs"
)

// TestSyncPacerWait walks a pacer through rounds: it waits only on the
// syncPacedAfter-th early ask in a row after a small round, for what is
// left of twice the average round since the last start, capped.
func TestSyncPacerWait(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	us := time.Microsecond
	type step struct {
		ask      time.Duration // when the round is asked for
		want     time.Duration // the wait
		bytes    int64         // what the round then covers
		took     time.Duration // how long its fdatasyncs take
		wantNext time.Duration // the spacing after it finished
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"the first round never waits", []step{
			{0, 0, 4 << 10, 500 * us, 1000 * us},
		}},
		{"one early ask does not wait, the second in a row does", []step{
			{0, 0, 4 << 10, 500 * us, 1000 * us},
			{500 * us, 0, 4 << 10, 500 * us, 1000 * us},         // early (due at 1000 µs): the first
			{1000 * us, 500 * us, 4 << 10, 500 * us, 1000 * us}, // early (due at 1500 µs): waits
		}},
		{"an ask after the spacing resets the run", []step{
			{0, 0, 4 << 10, 500 * us, 1000 * us},
			{500 * us, 0, 4 << 10, 500 * us, 1000 * us},
			{2000 * us, 0, 4 << 10, 500 * us, 1000 * us}, // on time
			{2100 * us, 0, 4 << 10, 500 * us, 1000 * us}, // early, but the first again
		}},
		{"an ask exactly when due is on time", []step{
			{0, 0, 4 << 10, 500 * us, 1000 * us},
			{1000 * us, 0, 4 << 10, 500 * us, 1000 * us},
			{2000 * us, 0, 4 << 10, 500 * us, 1000 * us},
			{2500 * us, 0, 4 << 10, 500 * us, 1000 * us}, // early, but the first
		}},
		{"a big round lets the next start at once", []step{
			{0, 0, 4 << 10, 500 * us, 1000 * us},
			{500 * us, 0, syncPacedBelowBytes, 500 * us, 1000 * us},
			{600 * us, 0, 4 << 10, 500 * us, 1000 * us}, // the round before was big enough
			{700 * us, 900 * us, 4 << 10, 500 * us, 1000 * us},
		}},
		{"slow syncs cap the spacing", []step{
			{0, 0, 4 << 10, 1500 * us, syncSpacingMax},
			{100 * us, 0, 4 << 10, 1500 * us, syncSpacingMax},
			{200 * us, syncSpacingMax - 100*us, 4 << 10, 1500 * us, syncSpacingMax}, // due 2 ms after the start at 100 µs
		}},
		{"the average moves an eighth of the way", []step{
			{0, 0, 4 << 10, 800 * us, 1600 * us},
			{10 * time.Millisecond, 0, 4 << 10, 0, 1400 * us}, // 800 - 800/8 = 700 µs
		}},
		{"a clock that does not move never waits", []step{
			{0, 0, 4 << 10, 0, 0},
			{0, 0, 4 << 10, 0, 0},
			{0, 0, 4 << 10, 0, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p syncPacer
			for i, s := range tt.steps {
				w := p.wait(at(s.ask))
				if w != s.want {
					t.Fatalf("step %d: wait = %v, want %v", i, w, s.want)
				}
				p.started(at(s.ask+w), s.bytes)
				p.finished(s.took)
				if got := p.spacing(); got != s.wantNext {
					t.Fatalf("step %d: spacing = %v, want %v", i, got, s.wantNext)
				}
			}
		})
	}
}

// TestSyncPacerNeverWaitsPastTheSpacing: whatever the history, a wait
// ends by the last start plus the spacing, so never exceeds
// syncSpacingMax.
func TestSyncPacerNeverWaitsPastTheSpacing(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var p syncPacer
	now := t0
	for i := range 10_000 {
		// A deterministic mix of gaps, sizes and sync times.
		now = now.Add(time.Duration(i*7919%3000) * time.Microsecond)
		due := p.lastStart.Add(p.spacing())
		w := p.wait(now)
		if w < 0 || w > syncSpacingMax || (w > 0 && now.Add(w).After(due)) {
			t.Fatalf("ask %d: wait %v (spacing %v, last start %v before)", i, w, p.spacing(), now.Sub(p.lastStart))
		}
		now = now.Add(w)
		p.started(now, int64(i*104729%(128<<10)))
		took := time.Duration(i*15485863%5000) * time.Microsecond
		p.finished(took)
		now = now.Add(took)
	}
}

// TestSyncRoundClaimedBeforeCloseEndsClean: a round claimed while the log
// was open (its leader pacing) finds the log closed when it runs: it
// releases the claim without syncing, so that its waiters go on.
func TestSyncRoundClaimedBeforeCloseEndsClean(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	appendN(t, l, 1, 1, 10, 0)
	l.mu.Lock()
	done := make(chan struct{})
	l.mu.syncing = done
	l.mu.Unlock()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.runSyncRound(done); err != nil {
		t.Fatalf("runSyncRound on a closed log: %v", err)
	}
	select {
	case <-done:
	default:
		t.Fatal("the claim's channel was left open: its waiters would hang")
	}
	l.mu.Lock()
	claimed := l.mu.syncing != nil
	l.mu.Unlock()
	if claimed {
		t.Fatal("the round is still claimed")
	}
}

// TestSyncRoundCountsItsBytes: the pacer hears how many appended bytes each
// round made durable, across segments, which decides whether the next
// round may wait.
func TestSyncRoundCountsItsBytes(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 8 << 10
	l := mustOpen(t, o)
	defer l.Close()
	sum := func(bs [][]byte) (n int64) {
		for _, b := range bs {
			n += int64(len(b))
		}
		return n
	}
	big := appendN(t, l, 30, 4, 200, 0) // several segments
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, want := l.mu.pacer.lastBytes, sum(big); got != want {
		t.Fatalf("first round covered %d bytes, want %d", got, want)
	}
	small := appendN(t, l, 1, 1, 10, 100)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, want := l.mu.pacer.lastBytes, sum(small); got != want {
		t.Fatalf("second round covered %d bytes, want %d", got, want)
	}
}

// TestSyncRoundTimesItsSyncs: the pacer's average hears each round's
// fdatasync time by the log's clock, and not a round that failed.
func TestSyncRoundTimesItsSyncs(t *testing.T) {
	var (
		clk  *clock.Manual
		fail atomic.Bool
	)
	o := crashOptions(vfs.NewFaulty(vfs.NewMem(), func(op vfs.Op, path string) error {
		if op != vfs.OpDatasync || filepath.Ext(path) != ".log" {
			return nil
		}
		if fail.Load() {
			clk.Advance(time.Second)
			return errors.New("injected: fdatasync failed")
		}
		clk.Advance(3 * time.Millisecond)
		return nil
	}))
	clk = o.Clock.(*clock.Manual)
	l := mustOpen(t, o)
	defer l.Close()
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if l.mu.pacer.avg != 3*time.Millisecond {
		t.Fatalf("average round %v after one of 3ms", l.mu.pacer.avg)
	}
	fail.Store(true)
	if err := appendBatches(1)(l); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err == nil {
		t.Fatal("Sync succeeded over a failing fdatasync")
	}
	if l.mu.pacer.avg != 3*time.Millisecond {
		t.Fatalf("average round %v: a failed round counted", l.mu.pacer.avg)
	}
}
