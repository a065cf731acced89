package txn

import (
	"maps"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Tick runs the timers due at now. The first Tick (right after a load)
// emits WriteMarkers for every transaction in Prepare* and arms the scans;
// later ones abort timed-out transactions every AbortCheckInterval and
// remove expired transactional ids every ExpiryCheckInterval.
func (c *Coordinator) Tick(now time.Time) runtime.Result {
	var res runtime.Result
	if !c.ticked {
		c.ticked = true
		for _, id := range slices.Sorted(maps.Keys(c.txns)) {
			if t := c.txns[id]; t.state.preparing() {
				res.Effects = append(res.Effects, c.writeMarkers(t))
			}
		}
		c.abortCheck = armAt(now.Add(c.opts.AbortCheckInterval))
		c.expiryCheck = armAt(now.Add(c.opts.ExpiryCheckInterval))
		return res
	}
	nowMs := now.UnixMilli()
	if c.abortCheck.passed(now) {
		c.abortTimedOut(nowMs, &res)
		c.abortCheck = armAt(now.Add(c.opts.AbortCheckInterval))
	}
	if c.expiryCheck.passed(now) {
		c.expireIDs(nowMs, &res)
		c.expiryCheck = armAt(now.Add(c.opts.ExpiryCheckInterval))
	}
	return res
}

// abortTimedOut fences and aborts every transaction Ongoing for longer than
// its timeout (Kafka's timedOutTransactions and abortTimedOutTransactions):
// the bumped epoch makes a late produce or EndTxn of its producer fail.
func (c *Coordinator) abortTimedOut(nowMs int64, res *runtime.Result) {
	for _, id := range slices.Sorted(maps.Keys(c.txns)) {
		t := c.txns[id]
		if t.state == stateOngoing && t.startMs.v+t.timeout.Milliseconds() < nowMs {
			c.fence(t, nowMs, res)
		}
	}
}

// expireIDs removes every transactional id idle for IDExpiration, with a
// tombstone (Kafka's removeExpiredTransactionalIds).
func (c *Coordinator) expireIDs(nowMs int64, res *runtime.Result) {
	limitMs := nowMs - c.opts.IDExpiration.Milliseconds()
	for _, id := range slices.Sorted(maps.Keys(c.txns)) {
		if t := c.txns[id]; t.state.idle() && t.lastUpdateMs <= limitMs {
			c.remove(t, nowMs, res)
		}
	}
}
