package quota

import (
	"math"
	"testing"
	"time"
)

// A replication throttle's rate: exceeded once more than the bound per
// second has been counted over the window (at least 10 s at first), and
// free again as the samples expire; the Long maximum never is.
func TestByteRate(t *testing.T) {
	r := NewByteRate(Config{Samples: 11, Window: time.Second})
	t0 := time.Unix(1000, 0)
	if r.Exceeded(100, t0) {
		t.Fatal("exceeded before anything was counted")
	}
	r.Record(900, t0) // 90 B/s over the 10 s floor
	if r.Exceeded(100, t0) {
		t.Fatal("900 bytes exceed 100 B/s")
	}
	r.Record(200, t0.Add(time.Second)) // 110 B/s
	if !r.Exceeded(100, t0.Add(time.Second)) {
		t.Fatal("1100 bytes in the first window do not exceed 100 B/s")
	}
	if r.Exceeded(math.MaxInt64, t0.Add(time.Second)) {
		t.Fatal("the unlimited bound was exceeded")
	}
	if r.Exceeded(100, t0.Add(12*time.Second)) {
		t.Fatal("still exceeded once the samples expired")
	}
}

// TestByteRateExceeded: where a replication throttle's bound lies, what
// counts towards it, and the sampling a config too small to use falls back
// to.
func TestByteRateExceeded(t *testing.T) {
	type rec struct {
		at time.Duration
		n  int64
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		records []rec
		bound   int64
		at      time.Duration
		want    bool
	}{
		{"exactly at the bound is within it", kafkaConfig(), []rec{{0, 1000}}, 100, 0, false},
		{"one byte over the bound", kafkaConfig(), []rec{{0, 1000}, {0, 1}}, 100, 0, true},
		// An empty record opens no sample: the rate is 1050 B over the
		// 10 s floor, not over the 10.9 s since the empty one.
		{"recording nothing changes nothing", kafkaConfig(), []rec{{0, 0}, {10900 * time.Millisecond, 1050}}, 100, 10900 * time.Millisecond, true},
		{"expired samples are not counted", kafkaConfig(), []rec{{0, 10000}, {5 * time.Second, 500}}, 100, 11 * time.Second, false},
		{"Kafka's int maximum is a bound like any", kafkaConfig(), []rec{{0, 30_000_000_000}}, math.MaxInt32, 0, true},
		{"a zero config samples as Kafka", Config{}, []rec{{0, 1000}}, 100, 0, false},
		// One sample would have no span to divide by: a first record
		// would read as an infinite rate.
		{"one sample samples as Kafka", Config{Samples: 1, Window: time.Second}, []rec{{0, 900}}, 100, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewByteRate(tc.cfg)
			for _, rc := range tc.records {
				r.Record(rc.n, t0.Add(rc.at))
			}
			if got := r.Exceeded(tc.bound, t0.Add(tc.at)); got != tc.want {
				t.Fatalf("Exceeded(%d) = %v, want %v", tc.bound, got, tc.want)
			}
		})
	}
}
