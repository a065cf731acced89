package tier

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/clock"
)

// ByteRate is a byte-rate quota shared by every partition of the broker
// (KIP-956: remote.log.manager.copy.max.bytes.per.second and
// …fetch.max.bytes.per.second). It is a token bucket holding at most one
// second of bytes; taking more than the bucket holds puts it in debt, so a
// single large segment or chunk is never refused, only followed by a pause.
// Its rate changes with SetRate (both keys are dynamic, as in Kafka). A nil
// *ByteRate is unlimited. Safe for concurrent use.
type ByteRate struct {
	clock clock.Clock

	mu     sync.Mutex
	perSec float64 // +Inf: unlimited
	tokens float64 // may be negative: debt
	last   time.Time
	// changed is closed and replaced by SetRate: Wait looks at its debt
	// again under the new rate.
	changed chan struct{}
}

// NewByteRate returns a quota of perSec bytes per second; perSec of at
// least half of math.MaxInt64 (Kafka's "unlimited" default) or not
// positive is unlimited.
func NewByteRate(perSec int64, clk clock.Clock) *ByteRate {
	r := &ByteRate{clock: clk, last: clk.Now(), changed: make(chan struct{})}
	r.perSec = ratePerSec(perSec)
	r.tokens = r.perSec
	return r
}

func ratePerSec(perSec int64) float64 {
	if perSec <= 0 || perSec >= math.MaxInt64/2 {
		return math.Inf(1)
	}
	return float64(perSec)
}

// SetRate changes the rate from now on: the bytes already earned are kept
// up to one second of the new rate, a debt is kept (an unlimited rate
// forgives it).
func (r *ByteRate) SetRate(perSec int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refillLocked()
	r.perSec = ratePerSec(perSec)
	r.tokens = min(r.tokens, r.perSec)
	if math.IsInf(r.perSec, 1) {
		r.tokens = r.perSec
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// refillLocked adds the tokens earned since the last call, up to one
// second's worth.
func (r *ByteRate) refillLocked() {
	now := r.clock.Now()
	if d := now.Sub(r.last); d > 0 {
		if !math.IsInf(r.perSec, 1) {
			r.tokens = min(r.perSec, r.tokens+d.Seconds()*r.perSec)
		}
		r.last = now
	}
}

// Take records n bytes moved without waiting and returns how long the
// caller should wait before moving more (0 when the bucket is not in debt).
func (r *ByteRate) Take(n int64) time.Duration {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refillLocked()
	r.tokens -= float64(n)
	return r.debtLocked()
}

func (r *ByteRate) debtLocked() time.Duration {
	if r.tokens >= 0 || math.IsInf(r.perSec, 1) {
		return 0
	}
	return time.Duration(-r.tokens / r.perSec * float64(time.Second))
}

// Exceeded reports whether the quota is used up for now: the bucket is in
// debt. A remote fetch checks it before reading and skips the read when
// it is (KIP-956), answering that partition with no records.
func (r *ByteRate) Exceeded() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refillLocked()
	return r.tokens < 0 && !math.IsInf(r.perSec, 1)
}

// Wait takes n bytes and then blocks until the bucket is out of debt, or
// ctx ends; a new rate (SetRate) shortens or lengthens the wait at once.
// Copies call it for each object they upload.
func (r *ByteRate) Wait(ctx context.Context, n int64) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	r.refillLocked()
	r.tokens -= float64(n)
	for {
		d, changed := r.debtLocked(), r.changed
		r.mu.Unlock()
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
			return nil
		case <-changed:
			t.Stop()
		}
		r.mu.Lock()
		r.refillLocked()
	}
}
