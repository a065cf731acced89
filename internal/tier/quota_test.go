package tier

import (
	"math"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
)

func TestByteRateUnlimitedIsNil(t *testing.T) {
	for _, perSec := range []int64{0, -1, math.MaxInt64, math.MaxInt64 / 2} {
		if r := NewByteRate(perSec, clock.Real{}); r != nil {
			t.Errorf("NewByteRate(%d) = %v, want nil (unlimited)", perSec, r)
		}
	}
	var r *ByteRate
	if r.Exceeded() || r.Take(1<<40) != 0 {
		t.Fatal("a nil ByteRate must never limit")
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
