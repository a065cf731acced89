package server

import (
	"time"

	"github.com/strata-broker/strata/internal/metrics"
)

// requestClock holds one request's timestamps while Options.RequestTimes
// is set; all zero otherwise.
type requestClock struct {
	read    time.Time // the frame is read
	handled time.Time // Handle returned
	picked  time.Time // the writer took it from the queue
	waited  time.Time // its response is obtained (Wait returned, or had no Wait)
}

// timed says whether requests are timed; without RequestTimes the server
// reads no clock per request.
func (c *conn) timed() bool { return c.srv.opts.RequestTimes != nil }

// stamp returns the time when requests are timed, else the zero time.
func (c *conn) stamp() time.Time {
	if !c.timed() {
		return time.Time{}
	}
	return time.Now()
}

// observeTiming hands p's phases to RequestTimes; sent is when its
// response was written (or dropped).
func (c *conn) observeTiming(p *pending, sent time.Time) {
	if !c.timed() {
		return
	}
	k := p.clock
	if k.waited.IsZero() {
		k.waited = k.picked
	}
	c.srv.opts.RequestTimes.Observe(metrics.RequestTiming{
		Key:           p.key,
		Local:         k.handled.Sub(k.read),
		ResponseQueue: k.picked.Sub(k.handled),
		Remote:        k.waited.Sub(k.picked),
		Send:          sent.Sub(k.waited),
	})
}
