package broker

import (
	"errors"
	"time"

	"github.com/strata-broker/strata/internal/partition"
)

// startLoops starts the image watcher, the retention loop, the flush
// loop, the ISR check, the high watermark checkpoint and, when on, the log
// cleaner. Each stops when b.stop closes; Close waits for them.
func (b *Broker) startLoops() {
	images, cancel := b.opts.Meta.Watch()
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		defer cancel()
		for {
			select {
			case <-b.stop:
				return
			case <-images:
				if err := b.Reconcile(); err != nil {
					b.logger.Error("reconciling partitions with metadata", "err", err)
				}
			}
		}
	}()
	b.every(b.opts.RetentionInterval, b.retentionPass)
	b.every(b.opts.FlushCheckInterval, b.flushPass)
	b.every(b.opts.ReplicaLagTimeMax/2, b.isrPass)
	b.every(b.hwCheckpointInterval(), b.checkpointHighWatermarks)
	if b.opts.ReopenFailedLogs {
		b.every(failedLogCheckInterval, b.reopenFailedLogs)
	}
	if b.opts.Cleaner != nil {
		b.startCleaner(*b.opts.Cleaner)
	}
	if b.opts.Tier != nil {
		b.every(b.opts.Tier.Interval, b.remoteDeletePass)
		b.every(b.opts.Tier.Interval, b.followerLocalRetentionPass)
		b.startOrphanLoop()
	}
}

func (b *Broker) every(d time.Duration, f func()) {
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				f()
			}
		}
	}()
}

// retentionPass plans and applies retention on every hosted partition.
func (b *Broker) retentionPass() {
	now := b.opts.Clock.Now().UnixMilli()
	for _, p := range b.Partitions() {
		p.ExpireProducers(now)
		if _, err := p.ApplyRetention(now); err != nil && !errors.Is(err, partition.ErrClosed) {
			b.logger.Error("applying retention", "partition", p.TP().String(), "err", err)
		}
	}
}

// RunRetention runs one retention pass now (DeleteRecords-free); used by
// tests and by operators through the CLI later.
func (b *Broker) RunRetention() { b.retentionPass() }

// flushPass syncs the partitions whose unflushed data is older than their
// flush.ms (log.flush.interval.ms); most topics never set it.
func (b *Broker) flushPass() {
	for _, p := range b.Partitions() {
		if err := p.FlushIfDue(); err != nil && !errors.Is(err, partition.ErrClosed) {
			b.logger.Error("flushing", "partition", p.TP().String(), "err", err)
		}
	}
}
