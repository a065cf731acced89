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
// A nil *ByteRate is unlimited. Safe for concurrent use.
type ByteRate struct {
	perSec float64
	clock  clock.Clock

	mu     sync.Mutex
	tokens float64 // may be negative: debt
	last   time.Time
}

// NewByteRate returns a quota of perSec bytes per second, or nil (no
// quota) when perSec is at least half of math.MaxInt64, Kafka's "unlimited"
// default, or not positive.
func NewByteRate(perSec int64, clk clock.Clock) *ByteRate {
	if perSec <= 0 || perSec >= math.MaxInt64/2 {
		return nil
	}
	return &ByteRate{perSec: float64(perSec), clock: clk, tokens: float64(perSec), last: clk.Now()}
}

// refillLocked adds the tokens earned since the last call, up to one
// second's worth.
func (r *ByteRate) refillLocked() {
	now := r.clock.Now()
	if d := now.Sub(r.last); d > 0 {
		r.tokens = min(r.perSec, r.tokens+d.Seconds()*r.perSec)
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
	if r.tokens >= 0 {
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
	return r.tokens < 0
}

// Wait takes n bytes and then blocks until the bucket is out of debt, or
// ctx ends. Copies call it for each object they upload.
func (r *ByteRate) Wait(ctx context.Context, n int64) error {
	d := r.Take(n)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
