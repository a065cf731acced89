package quota

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)

func kafkaConfig() Config { return Config{Samples: DefaultSamples, Window: DefaultWindow} }

func TestMeterRate(t *testing.T) {
	c := kafkaConfig()
	var m meter
	// A first burst is spread over samples-1 windows, not read as 1000/s.
	if r := m.record(c, 1000, t0); r != 100 {
		t.Fatalf("rate after a first 1000 bytes: %v, want 100", r)
	}
	for s := 1; s <= 20; s++ {
		m.record(c, 1000, t0.Add(time.Duration(s)*time.Second))
	}
	// 1000 bytes a second for long: the rate settles at 1000, over at most
	// Samples windows.
	r := m.rate(c, t0.Add(20*time.Second+500*time.Millisecond))
	if r < 900 || r > 1100 {
		t.Fatalf("steady rate %v, want about 1000", r)
	}
	if len(m.samples) > c.Samples {
		t.Fatalf("%d samples kept, at most %d", len(m.samples), c.Samples)
	}
	// Idle past the span: everything expired.
	if r := m.record(c, 0, t0.Add(60*time.Second)); r != 0 {
		t.Fatalf("rate after a minute idle: %v, want 0", r)
	}
}

// TestMeterSampleBoundaries: as Kafka's SampledStat, a record a whole
// window after a sample's start opens a new sample, and a sample expires
// exactly a span (samples × window) after it starts.
func TestMeterSampleBoundaries(t *testing.T) {
	type rec struct {
		at time.Duration
		v  float64
	}
	for _, tc := range []struct {
		name string
		recs []rec
		want float64 // the rate after the last
	}{
		// 1000 expires at 11 s; 500 is counted over 10 s.
		{"a window apart, then a span on", []rec{{0, 1000}, {time.Second, 500}, {11 * time.Second, 0}}, 50},
		{"just inside the span", []rec{{0, 1000}, {time.Second, 500}, {11*time.Second - time.Millisecond, 0}}, 1500 / 10.999},
	} {
		var m meter
		var got float64
		for _, r := range tc.recs {
			got = m.record(kafkaConfig(), r.v, t0.Add(r.at))
		}
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: rate %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestThrottle(t *testing.T) {
	c := kafkaConfig()
	for _, tc := range []struct {
		rate, bound float64
		elapsed     time.Duration
		want        time.Duration
	}{
		{100, 100, 0, 0},                              // at the bound
		{50, 100, 0, 0},                               // under it
		{150, 100, 0, 5 * time.Second},                // half over, of a 10 s window
		{150, 100, 12 * time.Second, 6 * time.Second}, // half over, of 12 s
		{1000, 100, 0, 90 * time.Second},              // not capped: Kafka's byte rates pay in full
		{1e30, 1, 0, math.MaxInt64},                   // saturated, not wrapped
		{100, 0, 0, 0},                                // no bound
	} {
		if got := Throttle(c, tc.rate, tc.bound, tc.elapsed); got != tc.want {
			t.Errorf("Throttle(rate %v, bound %v, elapsed %s) = %s, want %s", tc.rate, tc.bound, tc.elapsed, got, tc.want)
		}
	}
}

// TestThrottledClientKeepsToItsQuota: a client that sends as fast as it
// may, and waits out each throttle it is given, averages about its quota
// over a long run, whatever the quota and its request size.
func TestThrottledClientKeepsToItsQuota(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bound := float64(rapid.IntRange(1_000, 10_000_000).Draw(t, "bound"))
		size := int64(rapid.IntRange(1, int(bound)).Draw(t, "request bytes"))
		gap := time.Duration(rapid.IntRange(1, 50).Draw(t, "ms between requests")) * time.Millisecond
		m := NewManager(Config{})
		a := Applied{Bound: bound, Meter: Entity{User: NamedPart("u")}}
		now := t0
		end := t0.Add(120 * time.Second)
		var sent int64
		for now.Before(end) {
			sent += size
			wait := m.Record(ProducerByteRate, a, size, now)
			now = now.Add(max(wait, gap))
		}
		rate := float64(sent) / now.Sub(t0).Seconds()
		// The meter forgives the first samples-1 windows' burst: allow
		// one span's worth of the bound above it, plus a request.
		limit := bound*1.1 + float64(size)/now.Sub(t0).Seconds() + bound*10/now.Sub(t0).Seconds()
		if rate > limit {
			t.Fatalf("client averaged %.0f B/s against a quota of %.0f (limit %.0f)", rate, bound, limit)
		}
	})
}

func TestManagerCountsThrottles(t *testing.T) {
	m := NewManager(Config{})
	a := Applied{Bound: 100, Meter: Entity{ClientID: NamedPart("c")}}
	if d := m.Record(ProducerByteRate, a, 100, t0); d != 0 {
		t.Fatalf("within the quota: throttled %s", d)
	}
	d1 := m.Record(ProducerByteRate, a, 1000, t0)
	d2 := m.Record(ProducerByteRate, a, 1000, t0)
	stats := m.Stats()
	if d1 <= 0 || d2 <= d1 || len(stats) != 1 || stats[0] != (KeyStats{Key: ProducerByteRate, Throttles: 2, Throttled: d1 + d2}) {
		t.Fatalf("throttles %s, %s; stats %+v", d1, d2, stats)
	}
}

func TestManagerDropsIdleMeters(t *testing.T) {
	m := NewManager(Config{})
	a := Applied{Bound: 100, Meter: Entity{User: NamedPart("u")}}
	m.Record(ProducerByteRate, a, 10, t0)
	m.Record(ConsumerByteRate, a, 10, t0)
	if n := m.Meters(); n != 2 {
		t.Fatalf("%d meters, want one per key", n)
	}
	b := Applied{Bound: 100, Meter: Entity{User: NamedPart("v")}}
	m.Record(ProducerByteRate, b, 10, t0.Add(idleMeterTTL+sweepEvery))
	if n := m.Meters(); n != 1 {
		t.Fatalf("%d meters after an hour idle, want only the new one", n)
	}
}

func TestTakeCountsOnlyWhatIsServed(t *testing.T) {
	m := NewManager(Config{})
	a := Applied{Bound: 100, Meter: Entity{ClientID: NamedPart("c")}}
	if w := m.WindowBytes(a.Bound); w != 1000 {
		t.Fatalf("WindowBytes = %d, want the bound over 10 windows", w)
	}
	if d := m.Take(ConsumerByteRate, a, 1000, t0); d != 0 {
		t.Fatalf("a window's worth from a standing start: throttled %s", d)
	}
	if d := m.Take(ConsumerByteRate, a, 500, t0); d <= 0 {
		t.Fatal("going over the quota was not throttled")
	}
	// The refused 500 bytes were not counted: the client is at its bound.
	if d := m.Take(ConsumerByteRate, a, 0, t0); d != 0 {
		t.Fatalf("after a refused take, throttled %s: its bytes were counted", d)
	}
	if s := m.Stats(); len(s) != 1 || s[0].Throttles != 1 {
		t.Fatalf("stats %+v, want one throttle", s)
	}
}

// TestTakingConsumerIsServedItsQuota: a consumer that asks for at most
// WindowBytes at a time and waits out every throttle is served about its
// quota: never starved, never much over.
func TestTakingConsumerIsServedItsQuota(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bound := float64(rapid.IntRange(1_000, 10_000_000).Draw(t, "bound"))
		m := NewManager(Config{})
		ask := rapid.Int64Range(1, m.WindowBytes(bound)).Draw(t, "bytes per fetch")
		gap := time.Duration(rapid.IntRange(1, 500).Draw(t, "ms between fetches")) * time.Millisecond
		a := Applied{Bound: bound, Meter: Entity{ClientID: NamedPart("c")}}
		now, end := t0, t0.Add(300*time.Second)
		var served int64
		for now.Before(end) {
			wait := m.Take(ConsumerByteRate, a, ask, now)
			if wait == 0 {
				served += ask
			}
			now = now.Add(max(wait, gap))
		}
		secs := now.Sub(t0).Seconds()
		rate := float64(served) / secs
		asked := float64(ask) / gap.Seconds()
		if limit := bound*1.1 + float64(m.WindowBytes(bound))/secs; rate > limit {
			t.Fatalf("served %.0f B/s against a quota of %.0f", rate, bound)
		}
		if floor := 0.5 * min(bound, asked); rate < floor {
			t.Fatalf("served %.0f B/s, asking %.0f B/s of a %.0f B/s quota: starved", rate, asked, bound)
		}
	})
}
