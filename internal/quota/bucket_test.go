package quota

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// mutationStep is one Mutate call, at a time after t0, and what it must
// decide.
type mutationStep struct {
	at      time.Duration
	permits float64
	strict  bool
	want    MutationVerdict
}

// runMutations runs steps on m for a, failing at the first verdict that
// differs.
func runMutations(t *testing.T, m *Manager, a Applied, t0 time.Time, steps []mutationStep) {
	t.Helper()
	for i, s := range steps {
		if got := m.Mutate(a, s.permits, s.strict, t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d (%+v): %+v, want %+v", i, s, got, s.want)
		}
	}
}

// KIP-599's rule, step by step, on a bucket of rate 2 and burst 22 (Kafka's
// 11 one-second samples).
func TestMutateStrictAndPermissive(t *testing.T) {
	cfg := Config{Samples: 11, Window: time.Second}
	t0 := time.Unix(1000, 0)
	a := Applied{Bound: 2, Meter: Entity{ClientID: NamedPart("admin")}}
	m := NewManager(cfg)
	runMutations(t, m, a, t0, []mutationStep{
		{0, 20, true, MutationVerdict{Accepted: true}},                            // 22 → 2
		{0, 10, true, MutationVerdict{Accepted: true}},                            // 2 ≥ 0: accepted, → -8; strict pays later
		{0, 1, true, MutationVerdict{Accepted: false, Throttle: 4 * time.Second}}, // -8 owes 4 s at 2/s
		{2 * time.Second, 1, true, MutationVerdict{Accepted: false, Throttle: 2 * time.Second}},
		{4 * time.Second, 6, true, MutationVerdict{Accepted: true}},                             // back at 0: accepted, → -6
		{4 * time.Second, 4, false, MutationVerdict{Accepted: true, Throttle: 5 * time.Second}}, // permissive: → -10, owes 5 s
		{time.Hour, 30, false, MutationVerdict{Accepted: true, Throttle: 4 * time.Second}},      // refilled to 22 (not more), → -8
	})
	// Another client has a bucket of its own.
	other := Applied{Bound: 2, Meter: Entity{ClientID: NamedPart("other")}}
	if got := m.Mutate(other, 1, true, t0.Add(time.Hour)); !got.Accepted || got.Throttle != 0 {
		t.Fatalf("another client: %+v", got)
	}
	if st := m.Stats(); len(st) != 1 || st[0].Key != ControllerMutationRate || st[0].Throttles != 4 {
		t.Fatalf("Stats = %+v, want 4 throttles of %s", st, ControllerMutationRate)
	}
}

// A bucket of rate 1 and burst 11 across time that runs backwards (callers
// read the clock before taking the Manager's lock) and across the sweeps
// of idle state: a debt is kept while the client is active and forgotten,
// as Kafka expires an idle quota sensor, after an hour without a mutation.
func TestMutateBucketAcrossTime(t *testing.T) {
	refused := func(d time.Duration) MutationVerdict { return MutationVerdict{Accepted: false, Throttle: d} }
	accepted := MutationVerdict{Accepted: true}
	for _, tc := range []struct {
		name  string
		steps []mutationStep
	}{
		{"an earlier time neither refills nor takes", []mutationStep{
			{10 * time.Second, 11, true, accepted}, // 11 → 0
			{5 * time.Second, 1, true, accepted},   // still 0: accepted, → -1
			{10 * time.Second, 1, true, refused(time.Second)},
		}},
		{"a sweep keeps the bucket of an active client", []mutationStep{
			{0, 100, true, accepted},                               // 11 → -89
			{61 * time.Second, 1, true, refused(28 * time.Second)}, // refilled by 61 only
		}},
		{"a bucket idle for an hour is forgotten", []mutationStep{
			{0, 10000, false, MutationVerdict{Accepted: true, Throttle: 9989 * time.Second}},
			{idleMeterTTL + sweepEvery, 1, true, accepted}, // a fresh, full bucket
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Applied{Bound: 1, Meter: Entity{User: NamedPart("admin")}}
			runMutations(t, NewManager(kafkaConfig()), a, t0, tc.steps)
		})
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
		{bound: 20, took: time.Second, want: 0},                                  // 10 % of 20 %
		{bound: 50, took: 5250 * time.Millisecond, want: 500 * time.Millisecond}, // 52.5 % of 50 %: 2.5/50 of the 10 s window
		{bound: 5, took: time.Second, want: time.Second},                         // owes 10 s: bounded at one window, as Kafka
		{bound: 100, took: 5 * time.Second, want: 0},                             // half a core of one
		{bound: 1, took: time.Minute, want: time.Second},                         // bounded at one window
		{bound: 50, took: 10 * time.Millisecond, want: 0},                        // a request's usual cost
	} {
		m := NewManager(cfg)
		a := Applied{Bound: tc.bound, Meter: Entity{ClientID: NamedPart("c")}}
		if got := m.RecordRequestTime(a, tc.took, t0); got != tc.want {
			t.Errorf("bound %v%%, %v handled: throttle %v, want %v", tc.bound, tc.took, got, tc.want)
		}
	}
}
