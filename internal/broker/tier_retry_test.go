package broker

import (
	"testing"
	"time"
)

func TestTierRetryDelay(t *testing.T) {
	const ms = time.Millisecond
	std := tierRetry{Interval: 30 * time.Second, Backoff: 500 * ms, BackoffMax: 10 * time.Second}
	for _, tc := range []struct {
		name     string
		r        tierRetry
		failures int
		u        float64
		want     time.Duration
	}{
		{"success: the task interval", std, 0, 0.5, 30 * time.Second},
		{"success ignores jitter", std, 0, 0, 30 * time.Second},
		{"first failure: the backoff", std, 1, 0.5, 500 * ms},
		{"second: doubled", std, 2, 0.5, time.Second},
		{"third: doubled again", std, 3, 0.5, 2 * time.Second},
		{"fifth: 8 s", std, 5, 0.5, 8 * time.Second},
		{"sixth: capped at the max", std, 6, 0.5, 10 * time.Second},
		{"many failures: the max, no overflow", std, 500, 0.5, 10 * time.Second},
		{"jitter low end: -20%", std, 1, 0, 400 * ms},
		{"jitter high end: +20%", std, 1, 1, 600 * ms},
		{"jitter on a doubled delay", std, 3, 0.25, 1800 * ms},
		{"jitter never passes the max", std, 6, 1, 10 * time.Second},
		{"jitter below the max once capped", std, 6, 0, 8 * time.Second},
		{"never later than the interval", tierRetry{Interval: time.Second, Backoff: 500 * ms, BackoffMax: 30 * time.Second}, 3, 0.5, time.Second},
		{"a backoff above the interval: capped, then jittered", tierRetry{Interval: time.Second, Backoff: 5 * time.Second, BackoffMax: 30 * time.Second}, 1, 0, 800 * ms},
		{"a max below the backoff: the max", tierRetry{Interval: time.Minute, Backoff: 5 * time.Second, BackoffMax: 2 * time.Second}, 1, 0.5, 2 * time.Second},
		{"at least a millisecond", tierRetry{Interval: time.Second, Backoff: 1, BackoffMax: time.Second}, 1, 0, ms},
	} {
		if got := tc.r.next(tc.failures, tc.u); got != tc.want {
			t.Errorf("%s: next(%d, %v) = %v, want %v", tc.name, tc.failures, tc.u, got, tc.want)
		}
	}
}

// The delay never shrinks as failures pile up (for the same jitter draw)
// and stays within [0.8·Backoff, min(BackoffMax, Interval)].
func TestTierRetryDelayGrowsWithinBounds(t *testing.T) {
	r := tierRetry{Interval: 30 * time.Second, Backoff: 100 * time.Millisecond, BackoffMax: 7 * time.Second}
	for _, u := range []float64{0, 0.1, 0.5, 0.9, 0.999} {
		prev := time.Duration(0)
		for n := 1; n < 70; n++ {
			d := r.next(n, u)
			if d < prev || d < 80*time.Millisecond || d > 7*time.Second {
				t.Fatalf("u %v: next(%d) = %v after %v", u, n, d, prev)
			}
			prev = d
		}
	}
}
