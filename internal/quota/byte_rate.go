package quota

import (
	"math"
	"sync"
	"time"
)

// ByteRate is one byte rate shared by everything it counts, as a
// replication throttle (Kafka's ReplicationQuotaManager, KIP-73): the
// bytes a broker sends to, or fetches for, its throttled replicas. Unlike a
// client quota it throttles by leaving data out: Exceeded is asked before
// reading, Record told after. It is safe for concurrent use.
type ByteRate struct {
	cfg Config
	mu  sync.Mutex
	m   meter
}

// NewByteRate returns a rate sampled as cfg says; a zero field takes
// Kafka's default.
func NewByteRate(cfg Config) *ByteRate {
	if cfg.Samples < 2 {
		cfg.Samples = DefaultSamples
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	return &ByteRate{cfg: cfg}
}

// Exceeded reports whether the rate is above bound bytes per second now.
// A bound of the Long maximum (Kafka's unlimited default) never is.
func (r *ByteRate) Exceeded(bound int64, now time.Time) bool {
	if bound == math.MaxInt64 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m.expire(r.cfg, now)
	return r.m.rate(r.cfg, now) > float64(bound)
}

// Record counts n bytes at now.
func (r *ByteRate) Record(n int64, now time.Time) {
	if n <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m.record(r.cfg, float64(n), now)
}
