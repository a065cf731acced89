package quota

import (
	"math"
	"time"
)

// bucket is KIP-599's token bucket for controller mutations: it holds up to
// burst permits (the rate over the whole quota window: rate × samples ×
// window), refills at rate per second, and goes below zero when a request
// takes more than it holds; it starts full.
type bucket struct {
	tokens float64
	last   time.Time
}

// refill adds what rate has earned since the last use, up to burst.
func (b *bucket) refill(rate, burst float64, now time.Time) {
	if b.last.IsZero() {
		b.tokens = burst
	} else if now.After(b.last) {
		b.tokens = math.Min(burst, b.tokens+rate*now.Sub(b.last).Seconds())
	}
	if now.After(b.last) {
		b.last = now
	}
}

// owed is how long the bucket takes to climb back to zero at rate: the
// throttle of a client whose bucket is below zero; 0 otherwise.
func (b *bucket) owed(rate float64) time.Duration {
	if b.tokens >= 0 || rate <= 0 {
		return 0
	}
	return time.Duration(-b.tokens / rate * float64(time.Second))
}

// MutationVerdict is what Mutate decided for one topic's partitions.
type MutationVerdict struct {
	// Accepted is false when the topic is refused: strict mode, with the
	// client's bucket already below zero (THROTTLING_QUOTA_EXCEEDED).
	Accepted bool
	// Throttle is how long the client must wait: on a refusal, until its
	// bucket is back to zero; in permissive mode, the same after the
	// mutation is counted; 0 for a strict acceptance (the next request
	// pays, as Kafka's StrictControllerMutationQuota).
	Throttle time.Duration
}

// burst is the most permits a bucket holds for bound: the bound over the
// whole quota window (KIP-599: quota × quota.window.num ×
// quota.window.size.seconds).
func (c Config) burst(bound float64) float64 {
	return bound * float64(c.Samples) * c.Window.Seconds()
}

// decideMutation is KIP-599's rule on a refilled bucket: in strict mode
// (CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+) a mutation
// is refused while the bucket is below zero, else it takes its permits,
// even past zero; in permissive mode (older versions, which cannot be told
// THROTTLING_QUOTA_EXCEEDED) it always takes them and the client is
// throttled for any debt.
func decideMutation(b *bucket, rate, permits float64, strict bool) MutationVerdict {
	if strict && b.tokens < 0 {
		return MutationVerdict{Accepted: false, Throttle: b.owed(rate)}
	}
	b.tokens -= permits
	if strict {
		return MutationVerdict{Accepted: true}
	}
	return MutationVerdict{Accepted: true, Throttle: b.owed(rate)}
}
