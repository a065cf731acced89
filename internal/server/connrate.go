package server

import "time"

// creationBucket paces new connections for max.connection.creation.rate
// (KIP-612): a token bucket that refills at the rate up to a burst, which
// Kafka's sampled rate also allows (its rate is measured over several
// windows, so a quiet broker admits a burst before it throttles). A
// connection reserves a token; when the bucket is short, the accept loop
// waits until the token would have been there, as Kafka's acceptor waits
// out its throttle time, and the kernel's backlog holds the newcomers.
type creationBucket struct {
	tokens float64
	last   time.Time
}

// creationRule is a compiled max.connection.creation.rate; the zero value
// paces nothing.
type creationRule struct {
	rate  float64 // connections per second; 0: unlimited
	burst float64 // tokens the bucket holds at most, at least 1
}

// newCreationRule is the rule for rate connections per second with a
// burst of the connections burstOver allows at that rate (at least one).
func newCreationRule(rate int, burstOver time.Duration) creationRule {
	if rate <= 0 {
		return creationRule{}
	}
	return creationRule{rate: float64(rate), burst: max(float64(rate)*burstOver.Seconds(), 1)}
}

// reserve takes a token for one connection at now and returns the bucket
// after it and how long the connection waits for its token (0: at once).
// An unlimited rule leaves the bucket as it is. A fresh bucket (the zero
// last) starts full.
func (r creationRule) reserve(b creationBucket, now time.Time) (creationBucket, time.Duration) {
	if r.rate == 0 {
		return b, 0
	}
	b = r.refill(b, now)
	b.tokens--
	if b.tokens >= 0 {
		return b, 0
	}
	return b, time.Duration(-b.tokens / r.rate * float64(time.Second))
}

// refill adds the tokens earned since the bucket was last used, up to the
// burst, and stamps it with now; a fresh bucket (the zero last) starts
// full. A clock that went back earns nothing.
func (r creationRule) refill(b creationBucket, now time.Time) creationBucket {
	if b.last.IsZero() {
		b.tokens = r.burst
	} else if now.After(b.last) {
		b.tokens = min(r.burst, b.tokens+r.rate*now.Sub(b.last).Seconds())
	}
	b.last = now
	return b
}

// full reports whether the bucket would be full at now: it is then the
// same as a fresh one, and need not be kept.
func (r creationRule) full(b creationBucket, now time.Time) bool {
	return b.last.IsZero() || r.refill(b, now).tokens >= r.burst
}

// refund gives back a token reserved for a connection that was not
// served after all, up to the burst.
func (r creationRule) refund(b creationBucket) creationBucket {
	if r.rate > 0 {
		b.tokens = min(r.burst, b.tokens+1)
	}
	return b
}
