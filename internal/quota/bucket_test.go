package quota

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// KIP-599's rule, step by step, on a bucket of rate 2 and burst 22 (Kafka's
// 11 one-second samples).
func TestMutateStrictAndPermissive(t *testing.T) {
	cfg := Config{Samples: 11, Window: time.Second}
	t0 := time.Unix(1000, 0)
	a := Applied{Bound: 2, Meter: Entity{ClientID: NamedPart("admin")}}
	steps := []struct {
		at      time.Duration
		permits float64
		strict  bool
		want    MutationVerdict
	}{
		{0, 20, true, MutationVerdict{Accepted: true}},                            // 22 → 2
		{0, 10, true, MutationVerdict{Accepted: true}},                            // 2 ≥ 0: accepted, → -8; strict pays later
		{0, 1, true, MutationVerdict{Accepted: false, Throttle: 4 * time.Second}}, // -8 owes 4 s at 2/s
		{2 * time.Second, 1, true, MutationVerdict{Accepted: false, Throttle: 2 * time.Second}},
		{4 * time.Second, 6, true, MutationVerdict{Accepted: true}},                             // back at 0: accepted, → -6
		{4 * time.Second, 4, false, MutationVerdict{Accepted: true, Throttle: 5 * time.Second}}, // permissive: → -10, owes 5 s
		{time.Hour, 30, false, MutationVerdict{Accepted: true, Throttle: 4 * time.Second}},      // refilled to 22 (not more), → -8
	}
	m := NewManager(cfg)
	for i, s := range steps {
		if got := m.Mutate(a, s.permits, s.strict, t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d (%+v): %+v, want %+v", i, s, got, s.want)
		}
	}
	// Another client has a bucket of its own.
	other := Applied{Bound: 2, Meter: Entity{ClientID: NamedPart("other")}}
	if got := m.Mutate(other, 1, true, t0.Add(time.Hour)); !got.Accepted || got.Throttle != 0 {
		t.Fatalf("another client: %+v", got)
	}
	if st := m.Stats(); len(st) != 1 || st[0].Key != ControllerMutationRate || st[0].Throttles != 4 {
		t.Fatalf("Stats = %+v, want 4 throttles of %s", st, ControllerMutationRate)
	}
}

// Whatever a client asks, in strict mode it gets no more than the burst
// plus the rate times the time elapsed plus one request's overshoot, and
// it is never refused while its bucket is not in debt.
func TestMutateKeepsClientsToTheirRate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := Config{Samples: rapid.IntRange(2, 20).Draw(t, "samples"), Window: time.Second}
		rate := rapid.Float64Range(0.1, 50).Draw(t, "rate")
		a := Applied{Bound: rate}
		m := NewManager(cfg)
		now := time.Unix(0, 0)
		start := now
		var granted, biggest float64
		for range rapid.IntRange(1, 200).Draw(t, "requests") {
			now = now.Add(time.Duration(rapid.Int64Range(0, int64(2*time.Second)).Draw(t, "gap")))
			permits := float64(rapid.IntRange(1, 100).Draw(t, "permits"))
			v := m.Mutate(a, permits, true, now)
			if v.Accepted {
				granted += permits
				biggest = math.Max(biggest, permits)
			} else if v.Throttle <= 0 {
				t.Fatalf("refused without a throttle at %v", now)
			}
		}
		limit := cfg.burst(rate) + rate*now.Sub(start).Seconds() + biggest
		if granted > limit+1e-6 {
			t.Fatalf("granted %v permits in %v, more than burst %v + rate %v × time + one request %v",
				granted, now.Sub(start), cfg.burst(rate), rate, biggest)
		}
	})
}

// Handling time counts as percent-seconds: one second of handling in a
// fresh window (at least 10 s long) is 10 % of a core.
func TestRecordRequestTime(t *testing.T) {
	cfg := Config{Samples: 11, Window: time.Second}
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		bound float64
		took  time.Duration
		want  time.Duration
	}{
		{bound: 20, took: time.Second, want: 0},               // 10 % of 20 %
		{bound: 5, took: time.Second, want: 10 * time.Second}, // 10 % of 5 %: (10-5)/5 of the 10 s window
		{bound: 100, took: 5 * time.Second, want: 0},          // half a core of one
		{bound: 1, took: time.Minute, want: 11 * time.Second}, // capped at the span of the samples
		{bound: 50, took: 10 * time.Millisecond, want: 0},     // a request's usual cost
	} {
		m := NewManager(cfg)
		a := Applied{Bound: tc.bound, Meter: Entity{ClientID: NamedPart("c")}}
		if got := m.RecordRequestTime(a, tc.took, t0); got != tc.want {
			t.Errorf("bound %v%%, %v handled: throttle %v, want %v", tc.bound, tc.took, got, tc.want)
		}
	}
}

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
