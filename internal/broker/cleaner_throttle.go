package broker

import (
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/clock"
)

// throttleCheckInterval is how often Kafka's cleaner throttler compares the
// bytes it saw with its rate.
const throttleCheckInterval = 300 * time.Millisecond

// throttleDelay is Kafka's Throttler (log.cleaner.io.max.bytes.per.second):
// once more than throttleCheckInterval has passed since the period began,
// the bytes seen in it are compared with rate per second; over it, the
// caller sleeps until the period's average is back at the rate. newPeriod
// reports that the period ends (its bytes and start are reset).
func throttleDelay(observed int64, elapsed time.Duration, rate float64) (sleep time.Duration, newPeriod bool) {
	if elapsed <= throttleCheckInterval || observed <= 0 {
		return 0, false
	}
	if float64(observed)/elapsed.Seconds() <= rate {
		return 0, true
	}
	want := time.Duration(float64(observed) / rate * float64(time.Second))
	return max(want-elapsed, 0), true
}

// ioThrottle is the cleaner threads' shared throttler.
type ioThrottle struct {
	clock clock.Clock
	// sleep waits d, or less when stop closes.
	sleep func(d time.Duration, stop <-chan struct{})
	mu    sync.Mutex
	rate  float64 // bytes per second
	start time.Time
	seen  int64
}

func newIOThrottle(c clock.Clock) *ioThrottle {
	return &ioThrottle{clock: c, sleep: sleepOrStop, start: c.Now()}
}

// setRate takes a new rate from the next check on.
func (t *ioThrottle) setRate(rate float64) {
	t.mu.Lock()
	t.rate = rate
	t.mu.Unlock()
}

// moved counts n bytes read or written by a cleaner thread, and sleeps it
// when the threads are over the rate.
func (t *ioThrottle) moved(n int, stop <-chan struct{}) {
	t.mu.Lock()
	t.seen += int64(n)
	now := t.clock.Now()
	d, newPeriod := throttleDelay(t.seen, now.Sub(t.start), t.rate)
	if newPeriod {
		t.start, t.seen = now.Add(d), 0
	}
	t.mu.Unlock()
	if d > 0 {
		t.sleep(d, stop)
	}
}

func sleepOrStop(d time.Duration, stop <-chan struct{}) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-stop:
	}
}
