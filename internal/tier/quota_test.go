package tier

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
)

func TestByteRateUnlimited(t *testing.T) {
	for _, perSec := range []int64{0, -1, math.MaxInt64, math.MaxInt64 / 2} {
		r := NewByteRate(perSec, clock.Real{})
		if r.Exceeded() || r.Take(1<<40) != 0 || r.Take(1<<40) != 0 || r.Exceeded() {
			t.Errorf("NewByteRate(%d) limits", perSec)
		}
	}
	var r *ByteRate
	if r.Exceeded() || r.Take(1<<40) != 0 {
		t.Fatal("a nil ByteRate must never limit")
	}
}

// TestByteRateSetRate: a new rate applies from now on; a debt is kept
// under a limited rate and forgiven by an unlimited one.
func TestByteRateSetRate(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	r := NewByteRate(math.MaxInt64, clk)
	if d := r.Take(1 << 30); d != 0 {
		t.Fatalf("unlimited: wait %v", d)
	}
	r.SetRate(1000) // starts with a full second of the new rate
	if d := r.Take(3000); d != 2*time.Second || !r.Exceeded() {
		t.Fatalf("1000/s after 3000 bytes: wait %v, exceeded %v", d, r.Exceeded())
	}
	r.SetRate(2000) // the debt of 2000 is kept, repaid twice as fast
	if d := r.Take(0); d != time.Second {
		t.Fatalf("2000/s with 2000 of debt: wait %v", d)
	}
	r.SetRate(0) // unlimited forgives
	if d := r.Take(1 << 20); d != 0 || r.Exceeded() {
		t.Fatalf("unlimited again: wait %v, exceeded %v", d, r.Exceeded())
	}
	r.SetRate(500)
	clk.Advance(10 * time.Second)
	if d := r.Take(500); d != 0 {
		t.Fatalf("a full bucket of 500: wait %v", d)
	}
}

func TestByteRateDebtAndRefill(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	r := NewByteRate(1000, clk)
	steps := []struct {
		advance  time.Duration
		take     int64
		wantWait time.Duration
		exceeded bool
	}{
		{0, 600, 0, false},                                        // 1000 → 400
		{0, 400, 0, false},                                        // → 0: empty, not in debt
		{0, 500, 500 * time.Millisecond, true},                    // → -500
		{250 * time.Millisecond, 0, 250 * time.Millisecond, true}, // → -250
		{250 * time.Millisecond, 0, 0, false},                     // → 0
		{10 * time.Second, 0, 0, false},                           // capped at 1000, not 10000
		{0, 3000, 2 * time.Second, true},                          // one large take: debt, never refused
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		if got := r.Take(s.take); got != s.wantWait {
			t.Fatalf("step %d: Take(%d) wait = %v, want %v", i, s.take, got, s.wantWait)
		}
		if got := r.Exceeded(); got != s.exceeded {
			t.Fatalf("step %d: Exceeded() = %v, want %v", i, got, s.exceeded)
		}
	}
}

// TestByteRateWaitFollowsANewRate: a copy waiting out a debt goes on as
// soon as the rate is raised, without waiting the old rate's time.
func TestByteRateWaitFollowsANewRate(t *testing.T) {
	r := NewByteRate(1, clock.Real{}) // 1 byte a second: an hour's wait
	done := make(chan error, 1)
	go func() { done <- r.Wait(context.Background(), 3600) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Wait returned at once (%v) with an hour of debt", err)
	default:
	}
	r.SetRate(math.MaxInt64)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not follow the new, unlimited rate")
	}
}
