package broker

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/partition"
)

func TestThrottleDelay(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name      string
		observed  int64
		elapsed   time.Duration
		rate      float64
		sleep     time.Duration
		newPeriod bool
	}{
		{"within the check interval nothing is checked", 100 * mb, 300 * time.Millisecond, mb, 0, false},
		{"nothing seen", 0, time.Second, mb, 0, false},
		{"under the rate: a new period, no sleep", mb / 2, time.Second, mb, 0, true},
		{"at the rate", mb, time.Second, mb, 0, true},
		{"twice the rate sleeps as long again", 2 * mb, time.Second, mb, time.Second, true},
		{"ten times over 400 ms", 4 * mb, 400 * time.Millisecond, mb, 3600 * time.Millisecond, true},
		{"unlimited", 1 << 40, time.Second, 1.7976931348623157e308, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sleep, newPeriod := throttleDelay(tt.observed, tt.elapsed, tt.rate)
			if sleep != tt.sleep || newPeriod != tt.newPeriod {
				t.Fatalf("throttleDelay = %v, %v; want %v, %v", sleep, newPeriod, tt.sleep, tt.newPeriod)
			}
		})
	}
}

// TestIOThrottleSharesOneRate: the bytes of every caller count against one
// rate; a caller over it sleeps what throttleDelay says, and a new rate
// applies from the next check.
func TestIOThrottleSharesOneRate(t *testing.T) {
	c := clock.NewManual(time.Unix(1000, 0))
	th := newIOThrottle(c)
	var slept []time.Duration
	th.sleep = func(d time.Duration, _ <-chan struct{}) { slept = append(slept, d); c.Advance(d) }
	th.setRate(1000)
	th.moved(600, nil)
	th.moved(600, nil) // a second thread: 1200 bytes within the interval, not checked yet
	c.Advance(400 * time.Millisecond)
	th.moved(800, nil) // 2000 bytes in 400 ms at 1000/s: 2 s in all, 1.6 s more
	if len(slept) != 1 || slept[0] != 1600*time.Millisecond {
		t.Fatalf("slept %v, want [1.6s]", slept)
	}
	c.Advance(400 * time.Millisecond)
	th.moved(800, nil) // the period began as the sleep ended: 800 bytes in 400 ms, 400 ms more
	if len(slept) != 2 || slept[1] != 400*time.Millisecond {
		t.Fatalf("slept %v, want [1.6s 400ms]", slept)
	}
	th.setRate(1e9)
	c.Advance(time.Second)
	th.moved(5000, nil)
	if len(slept) != 2 {
		t.Fatalf("slept %v under a rate it was far below", slept)
	}
}

// TestRateOrUnlimited: an IOBytesPerSecond of 0 does not throttle.
func TestRateOrUnlimited(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{{0, math.MaxFloat64}, {1, 1}, {2.5e6, 2.5e6}} {
		if got := rateOrUnlimited(tc.in); got != tc.want {
			t.Errorf("rateOrUnlimited(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestCleanerOptionsChangeAtRunTime: the running cleaner follows new
// options: more threads start, fewer stop (sleeping ones at once), and the
// threads clean with the new settings; the broker's Close stops them all
// (the package's leak check).
func TestCleanerOptionsChangeAtRunTime(t *testing.T) {
	meta := openTestMeta(t)
	o := idleTestOptions(t, meta, partition.Config{SegmentBytes: 1024, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20,
		MaxMessageBytes: 1 << 20, Compact: true, Compaction: partition.Compaction{MinCleanableRatio: 0.01, DeleteRetention: time.Hour}})
	o.Cleaner = &CleanerOptions{Backoff: time.Hour, DedupeBytes: 1 << 20, Threads: 1}
	b := startTestBroker(t, o)
	requireCleanerThreads(t, b, 1)

	for _, n := range []int{4, 2, 1, 3} {
		if err := b.SetCleanerOptions(CleanerOptions{Backoff: 10 * time.Millisecond, DedupeBytes: 3 << 20, Threads: n, IOBytesPerSecond: 1 << 30}); err != nil {
			t.Fatal(err)
		}
		requireCleanerThreads(t, b, n)
	}
	if got, ok := b.CleanerOptions(); !ok || got.Threads != 3 || got.IOBytesPerSecond != 1<<30 {
		t.Fatalf("CleanerOptions = %+v, %v", got, ok)
	}
	b.cleaners.throttle.mu.Lock()
	rate := b.cleaners.throttle.rate
	b.cleaners.throttle.mu.Unlock()
	if rate != 1<<30 {
		t.Fatalf("the threads' throttle runs at %v bytes/s, want the new 1 GiB/s", rate)
	}
	// The new backoff: a partition made dirty now is cleaned within it,
	// not after the hour the cleaner started with.
	createTopic(t, meta, "compacted", 1)
	p := hostedPartition(t, b, "compacted")
	for j := range 60 {
		if _, _, err := p.Append(keyedBatch(fmt.Sprintf("k%d", j%3)), partition.AcksLeader); err != nil {
			t.Fatal(err)
		}
	}
	before := p.SizeBytes()
	deadline := time.Now().Add(30 * time.Second)
	for p.SizeBytes() >= before {
		if time.Now().After(deadline) {
			t.Fatalf("partition still %d bytes (%d before) 30 s after the backoff became 10 ms", p.SizeBytes(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}

	if err := b.SetCleanerOptions(CleanerOptions{Backoff: 0, DedupeBytes: 1}); err == nil {
		t.Fatal("a zero backoff was taken")
	}
}

func TestSetCleanerOptionsWithoutCleaner(t *testing.T) {
	meta := openTestMeta(t)
	b := startTestBroker(t, idleTestOptions(t, meta, partition.Config{SegmentBytes: 1024, IndexIntervalBytes: 4096,
		SegmentIndexBytes: 1 << 20, MaxMessageBytes: 1 << 20}))
	if err := b.SetCleanerOptions(CleanerOptions{Backoff: time.Second, DedupeBytes: 1 << 20, Threads: 1}); !errors.Is(err, errNoCleaner) {
		t.Fatalf("SetCleanerOptions on a broker without a cleaner: %v", err)
	}
	if _, ok := b.CleanerOptions(); ok {
		t.Fatal("a broker without a cleaner reports options")
	}
}

// requireCleanerThreads waits until exactly n cleaner threads run.
func requireCleanerThreads(t *testing.T, b *Broker, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.cleaners.mu.Lock()
		alive := 0
		for _, a := range b.cleaners.alive {
			if a {
				alive++
			}
		}
		b.cleaners.mu.Unlock()
		if alive == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d cleaner threads run, want %d", alive, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
