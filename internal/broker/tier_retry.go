package broker

import "time"

// tierRetry is how a partition's tier loop paces its passes: every
// Interval (remote.log.manager.task.interval.ms) while they succeed, and
// sooner after a failure, backing off exponentially from Backoff to
// BackoffMax (remote.log.manager.task.retry.backoff.ms and
// ….backoff.max.ms), as Kafka's ExponentialBackoff does.
type tierRetry struct {
	Interval   time.Duration
	Backoff    time.Duration
	BackoffMax time.Duration
}

// tierRetryJitter is the ±20% spread of each retry delay (Kafka's
// RETRY_BACKOFF_JITTER), so partitions that failed together, on one
// unreachable bucket, do not retry in lockstep.
const tierRetryJitter = 0.2

// next returns the wait before the next pass after failures passes in a
// row failed (0: the last pass succeeded). After the n-th failure it is
// Backoff·2^(n-1) capped at BackoffMax and at Interval (a failing
// partition never waits longer than a healthy one), times a jitter factor
// 1 ± tierRetryJitter drawn from u (uniform in [0, 1): u = 0.5 is no
// jitter), and capped again.
func (r tierRetry) next(failures int, u float64) time.Duration {
	if failures <= 0 {
		return r.Interval
	}
	limit := min(r.BackoffMax, r.Interval)
	d := float64(r.Backoff)
	for range failures - 1 {
		if d >= float64(limit) {
			break // stop before overflowing
		}
		d *= 2
	}
	// Jitter applies to the capped term, so a partition failing for long
	// still spreads its retries over [0.8, 1]·limit.
	d = min(d, float64(limit)) * (1 + tierRetryJitter*(2*u-1))
	if d >= float64(limit) {
		return limit
	}
	return max(time.Duration(d), time.Millisecond)
}
