package quota

import (
	"math"
	"time"
)

// Kafka's defaults of quota.window.num and quota.window.size.seconds: a
// rate is measured over the last 11 one-second samples.
const (
	DefaultSamples = 11
	DefaultWindow  = time.Second
)

// sample is the bytes counted in one window, from start.
type sample struct {
	start time.Time
	total float64
}

// meter is a rate over the last samples windows (Kafka's Rate over a
// SampledStat): the bytes of the samples that have not expired over the
// time they span, which counts as at least samples-1 whole windows, so
// that a burst at the start of a meter is not read as a huge rate.
type meter struct {
	samples []sample // oldest first, at most cfg.Samples
	last    time.Time
}

// Config is the meters' sampling: Samples windows of Window each.
type Config struct {
	Samples int
	Window  time.Duration
}

// span is the time the samples cover: a quota violation's throttle is
// measured against it.
func (c Config) span() time.Duration { return time.Duration(c.Samples) * c.Window }

// record counts v at now and returns the rate after it, in units per
// second.
func (m *meter) record(c Config, v float64, now time.Time) float64 {
	m.expire(c, now)
	if n := len(m.samples); n == 0 || now.Sub(m.samples[n-1].start) >= c.Window {
		if n == c.Samples {
			m.samples = append(m.samples[:0], m.samples[1:]...)
		}
		m.samples = append(m.samples, sample{start: now})
	}
	m.samples[len(m.samples)-1].total += v
	m.last = now
	return m.rate(c, now)
}

// unrecord takes back v, which the last record counted at now.
func (m *meter) unrecord(v float64) {
	if n := len(m.samples); n > 0 {
		m.samples[n-1].total -= v
	}
}

// expire drops the samples that ended more than the span ago.
func (m *meter) expire(c Config, now time.Time) {
	keep := 0
	for keep < len(m.samples) && now.Sub(m.samples[keep].start) >= c.span() {
		keep++
	}
	m.samples = append(m.samples[:0], m.samples[keep:]...)
}

// rate is the bytes of the live samples per second of the time they span,
// at least samples-1 windows (Kafka's Rate.windowSize).
func (m *meter) rate(c Config, now time.Time) float64 {
	if len(m.samples) == 0 {
		return 0
	}
	var total float64
	for _, s := range m.samples {
		total += s.total
	}
	return total / windowSeconds(c, now.Sub(m.samples[0].start))
}

// windowSeconds is the time a rate divides by: the elapsed time since the
// oldest sample began, raised to at least samples-1 whole windows.
func windowSeconds(c Config, elapsed time.Duration) float64 {
	full := int(elapsed / c.Window)
	if minFull := c.Samples - 1; full < minFull {
		elapsed += time.Duration(minFull-full) * c.Window
	}
	return elapsed.Seconds()
}

// Throttle is how long a client measured at rate against bound waits so
// that its rate falls back to the bound over the meter's window (Kafka's
// QuotaUtils.throttleTime): (rate - bound) / bound of the window; 0 within
// the bound. It is not capped, as Kafka's byte rate quotas are not: a
// request far over the quota is paid for in full, or a client sending
// such requests would average far more than its quota. It saturates at
// the longest Duration.
func Throttle(c Config, rate, bound float64, elapsed time.Duration) time.Duration {
	if bound <= 0 || rate <= bound {
		return 0
	}
	window := windowSeconds(c, elapsed)
	return time.Duration(saturatingInt64((rate - bound) / bound * window * float64(time.Second)))
}

// saturatingInt64 is f (non-negative) as an int64, the int64 maximum for
// anything beyond it: a float out of int64's range does not convert (on
// amd64 it comes out negative).
func saturatingInt64(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(f)
}
