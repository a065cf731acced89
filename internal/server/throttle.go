package server

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// throttleOf is resp's throttle_time_ms, and whether its version applies
// it after the response (KIP-219, Kafka 2.0) rather than before.
func throttleOf(resp kmsg.Response) (d time.Duration, after bool) {
	tr, ok := resp.(kmsg.ThrottleResponse)
	if !ok {
		return 0, false
	}
	ms, after := tr.Throttle()
	if ms <= 0 {
		return 0, after
	}
	return time.Duration(ms) * time.Millisecond, after
}

// muteUntil keeps the reader from reading the next request before t (a
// throttled response was written).
func (c *conn) muteUntil(t time.Time) {
	until := t.UnixNano()
	for {
		cur := c.mutedUntil.Load()
		if until <= cur || c.mutedUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// muteLeft is how long the reader must still wait before it reads the next
// request; it reads no clock while the connection was never throttled.
func (c *conn) muteLeft() time.Duration {
	until := c.mutedUntil.Load()
	if until == 0 {
		return 0
	}
	return time.Until(time.Unix(0, until))
}

// throttleWait waits d (nothing when d <= 0) for a throttle. It ends early when
// the server stops, so that a drain reads and answers what the client has
// sent, and returns false when the connection is torn down meanwhile.
func (c *conn) throttleWait(d time.Duration) bool {
	if d <= 0 {
		return c.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.srv.stopping:
		return true
	case <-c.ctx.Done():
		return false
	}
}
