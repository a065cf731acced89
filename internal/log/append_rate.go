package log

import "time"

// zeroFillMaxBytesPerSec: a log appending faster than this does not
// zero-fill (zerofill.go). The zeros double the bytes written: at a high
// rate that costs more (about 10 % of durable produce throughput on the
// 2-core bench machine) than the cheaper fdatasyncs give back, while at a
// low rate it costs little and each sync, carrying few bytes, is most of
// what a producer waits for.
const zeroFillMaxBytesPerSec = 4 << 20

// appendRate measures a log's append rate over windows of about a second.
type appendRate struct {
	windowStart time.Time
	windowBytes int64
	lastRate    int64 // bytes/s over the last whole window; 0 before one
}

// add counts n bytes appended at now. A window closes at the first append
// a second or more after it opened, so a pause lowers the rate at once.
func (r *appendRate) add(n int64, now time.Time) {
	if r.windowStart.IsZero() {
		r.windowStart = now
	}
	if elapsed := now.Sub(r.windowStart); elapsed >= time.Second {
		r.lastRate = int64(float64(r.windowBytes) / elapsed.Seconds())
		r.windowStart, r.windowBytes = now, 0
	}
	r.windowBytes += n
}

// atMost reports whether neither the last window nor the current one so
// far went past limit bytes per second.
func (r *appendRate) atMost(limit int64) bool {
	return r.lastRate <= limit && r.windowBytes <= limit
}
