package broker

import (
	"context"
	"errors"
	"time"

	"github.com/strata-broker/strata/internal/metadata"
)

// ISR change proposals retry an unknown outcome (no controller, a lost
// connection) after isrRetryMin, doubling up to isrRetryMax, as long as
// the change is still the one in flight.
const (
	isrRetryMin = 100 * time.Millisecond
	isrRetryMax = 5 * time.Second
)

func (b *Broker) nowMs() int64 { return b.opts.Clock.Now().UnixMilli() }

// submitISRChange proposes c, the change in flight of ls, to the
// controller on a goroutine of its own (Kafka's AlterPartitionManager):
// the request path never waits for the quorum. The caller may hold
// ls.mu. A broker that is closing proposes nothing.
func (b *Broker) submitISRChange(ls *leaderState, c *isrChange) {
	b.async.goTask(func(ctx context.Context) { b.runISRChange(ctx, ls, c) })
}

// runISRChange sends c until the controller answers it, or it is no
// longer in flight. The controller's answer settles it (answered); an
// applied change reaches the leader state through the next image, as
// every ISR change does. A refusal (a stale leader or partition epoch,
// an ineligible replica, …) means this node's image is behind: the
// change is dropped and the next one waits for a newer image.
func (b *Broker) runISRChange(ctx context.Context, ls *leaderState, c *isrChange) {
	backoff := isrRetryMin
	for ls.current(c) {
		img := b.opts.Meta.Image()
		var brokerEpoch int64
		if reg, ok := img.Brokers[b.opts.NodeID]; ok {
			brokerEpoch = reg.Epoch
		}
		applied, err := b.opts.Meta.AlterPartition(ctx, metadata.ISRChange{
			TopicID: ls.topicID, Partition: ls.tp.Partition, Leader: b.opts.NodeID, BrokerEpoch: brokerEpoch,
			LeaderEpoch: c.leaderEpoch, PartitionEpoch: c.partitionEpoch, ISR: c.isr,
		})
		switch {
		case err == nil:
			b.logger.Info("ISR changed", "partition", ls.tp.String(), "isr", applied.ISR,
				"leader_epoch", applied.LeaderEpoch, "partition_epoch", applied.PartitionEpoch)
			ls.answered(c, applied, nil)
			return
		case ctx.Err() != nil || errors.Is(err, metadata.ErrClosed):
			return
		case !errors.Is(err, metadata.ErrNotController):
			b.logger.Info("the controller refused an ISR change; waiting for newer metadata",
				"partition", ls.tp.String(), "isr", c.isr, "err", err)
			ls.answered(c, metadata.Partition{}, err)
			return
		}
		b.logger.Warn("proposing an ISR change (retried)", "partition", ls.tp.String(), "isr", c.isr, "in", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, isrRetryMax)
	}
}

// isrPass is the periodic check of every partition led here with
// followers (Kafka's isr-expiration task, every replica.lag.time.max.ms
// / 2): out-of-sync members are proposed to leave the ISR, and the high
// watermark is recomputed, since a follower outside the ISR that stopped
// being caught up no longer holds it.
func (b *Broker) isrPass() {
	img := b.opts.Meta.Image()
	brokers := brokersOf(img)
	now := b.nowMs()
	for _, ls := range b.leaderStates() {
		b.checkISR(ls, img.Version, brokers, now)
	}
}

func (b *Broker) checkISR(ls *leaderState, imgVersion uint64, brokers brokerLookup, nowMs int64) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.mu.retired || !ls.p.IsLeader() {
		return
	}
	off := ls.p.Offsets()
	if c, out := ls.maybeShrinkLocked(off.LogEnd, imgVersion, nowMs); c != nil {
		b.logger.Info("shrinking the ISR", "partition", ls.tp.String(), "from", ls.mu.isr, "to", c.isr,
			"out_of_sync", out, "high_watermark", off.HighWatermark, "log_end", off.LogEnd)
		b.submitISRChange(ls, c)
	}
	ls.advanceLocked(off, brokers, nowMs)
}

// leaderStates are the leader states of the partitions led here with
// followers.
func (b *Broker) leaderStates() []*leaderState {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*leaderState
	for _, h := range b.mu.parts {
		if h.leader != nil {
			out = append(out, h.leader)
		}
	}
	return out
}
