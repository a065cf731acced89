package quota

import (
	"math"
	"testing"
	"time"
)

// TestManagerThrottle: a producer's throttle against 100 B/s. Once the
// samples span more than the samples-1 windows floor, it is measured over
// the time they span (Kafka's QuotaUtils.throttleTime over
// Rate.windowSize), not over the floor; and a request far over the quota
// is paid for in full, as Kafka's byte rate throttles are not capped, or a
// client sending such requests would average many times its quota.
func TestManagerThrottle(t *testing.T) {
	type rec struct {
		at time.Duration
		n  int64
	}
	for _, tc := range []struct {
		name string
		recs []rec
		want time.Duration // the throttle after the last
	}{
		// 1600 B over 10.5 s: (152.4-100)/100 of 10.5 s.
		{"over the elapsed window", []rec{{0, 100}, {10500 * time.Millisecond, 1500}}, 5500 * time.Millisecond},
		// 100000 B over the 10 s floor: (10000-100)/100 of 10 s.
		{"a huge request pays in full", []rec{{0, 100_000}}, 990 * time.Second},
	} {
		m := NewManager(kafkaConfig())
		a := Applied{Bound: 100, Meter: Entity{User: NamedPart("u")}}
		var d time.Duration
		for _, r := range tc.recs {
			d = m.Record(ProducerByteRate, a, r.n, t0.Add(r.at))
		}
		if d < tc.want-time.Millisecond || d > tc.want+time.Millisecond {
			t.Errorf("%s: throttle %s, want %s", tc.name, d, tc.want)
		}
	}
}

// TestManagerStatsByKey: every key's throttles are counted, request time
// included, and Stats lists the keys in order.
func TestManagerStatsByKey(t *testing.T) {
	m := NewManager(kafkaConfig())
	a := Applied{Bound: 1, Meter: Entity{ClientID: NamedPart("c")}}
	var want []KeyStats
	for _, key := range []string{ProducerByteRate, RequestPercentage, ConsumerByteRate} {
		var d time.Duration
		if key == RequestPercentage {
			d = m.RecordRequestTime(a, time.Second, t0)
		} else {
			d = m.Record(key, a, 1000, t0)
		}
		if d <= 0 {
			t.Fatalf("%s over its quota was not throttled", key)
		}
		want = append(want, KeyStats{Key: key, Throttles: 1, Throttled: d})
	}
	want = []KeyStats{want[2], want[0], want[1]} // consumer, producer, request
	got := m.Stats()
	if len(got) != len(want) {
		t.Fatalf("Stats = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Stats = %+v, want %+v", got, want)
		}
	}
}

// TestManagerSweepsEveryMinute: the meters idle for an hour go at the
// first record a sweep interval after the last sweep.
func TestManagerSweepsEveryMinute(t *testing.T) {
	m := NewManager(kafkaConfig())
	for i, s := range []struct {
		user   string
		at     time.Duration
		meters int
	}{
		{"u", 0, 1},
		{"v", idleMeterTTL - 30*time.Second, 2}, // u idle under an hour: kept
		{"v", idleMeterTTL - 30*time.Second + sweepEvery, 1}, // a minute on: u swept
	} {
		a := Applied{Bound: 100, Meter: Entity{User: NamedPart(s.user)}}
		m.Record(ProducerByteRate, a, 10, t0.Add(s.at))
		if n := m.Meters(); n != s.meters {
			t.Fatalf("step %d: %d meters, want %d", i, n, s.meters)
		}
	}
}

// TestWindowBytes: the bound over samples-1 windows, for any config that
// NewManager takes, saturating where the product leaves int64.
func TestWindowBytes(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		bound float64
		want  int64
	}{
		{kafkaConfig(), 100, 1000},
		{Config{}, 100, 1000},
		{Config{Samples: 1, Window: time.Second}, 100, 1000}, // one sample is too few: Kafka's 11
		{Config{Samples: 3, Window: 2 * time.Second}, 100, 400},
		{kafkaConfig(), 1e18, math.MaxInt64},
		{kafkaConfig(), math.MaxInt64, math.MaxInt64},
	} {
		if got := NewManager(tc.cfg).WindowBytes(tc.bound); got != tc.want {
			t.Errorf("%+v: WindowBytes(%v) = %d, want %d", tc.cfg, tc.bound, got, tc.want)
		}
	}
}
