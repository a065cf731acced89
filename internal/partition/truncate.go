package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// lockForTruncation takes every lock a truncation needs, in the order
// every other path takes them (cleanerCheckpoint, snapFiles, the aborted
// index's, then mu), and returns their release. Holding snapFiles keeps
// snapshot files from being written or pruned meanwhile; the aborted
// index's lock lets the truncation mark the index file for a rewrite.
func (p *Partition) lockForTruncation() (unlock func()) {
	p.cleanerCheckpoint.Lock()
	p.snapFiles.Lock()
	p.txnIndex.mu.Lock()
	p.mu.Lock()
	return func() {
		p.mu.Unlock()
		p.txnIndex.mu.Unlock()
		p.snapFiles.Unlock()
		p.cleanerCheckpoint.Unlock()
	}
}

// TruncateTo truncates a follower's log so that it ends at o, where its
// fetcher found that it diverges from its leader's (KIP-101, KIP-279), as
// Kafka's UnifiedLog.truncateTo does:
//   - o at or past the log end changes no batch, but the epochs of the
//     leader-epoch cache that start at or after the log end go (this
//     replica may have led them without appending);
//   - otherwise the log is cut before the first batch at or after o (an o
//     inside a batch cuts before that batch: the log holds whole batches,
//     so it may end below o), the epochs starting at or after the new end
//     go (LeaderEpochFileCache.truncateFromEnd), producer state is rebuilt
//     from the newest snapshot at or below the new end plus a replay of
//     the log after it (snapshots past the end are removed), the aborted
//     transactions whose marker is gone leave the index, and the high
//     watermark is clamped to the new end;
//   - an o below the local log start starts the log over at o
//     (TruncateFullyAndStartAt), with the log start at most o; one whose
//     cut would fall below the log start starts it over at the lower of o
//     and the log start, which becomes the log start.
//
// Truncating below the high watermark (an unclean leader election) is
// done, with a warning. The cut is durable before TruncateTo returns; so
// are the epoch cache and the removal of snapshots. A leader refuses it
// with ErrNotFollower.
func (p *Partition) TruncateTo(o base.Offset) error {
	if o < 0 {
		return fmt.Errorf("partition %v: truncate to %d: %w", p.opts.TP, o, ErrOffsetOutOfRange)
	}
	unlock := p.lockForTruncation()
	defer unlock()
	if err := p.checkFollowerLocked(); err != nil {
		return err
	}
	end := p.log.End()
	if o >= end {
		return p.saveEpochsLocked(p.mu.epochs.truncateFromEnd(end))
	}
	if o < p.log.Start() {
		p.logger.Warn("truncating below the local log start: the log starts over", "to", o,
			"log_start", p.mu.logStart, "local_log_start", p.log.Start(), "log_end", end)
		return p.truncateFullyLocked(o, min(p.mu.logStart, o))
	}
	cut, err := p.batchBoundaryAtOrBelowLocked(o)
	if err != nil {
		return err
	}
	if cut < p.mu.logStart {
		// At the log start, a fetch gets the batch holding it, which
		// AppendAsFollower starts the log over at.
		at := min(o, p.mu.logStart)
		p.logger.Warn("truncating below the log start: the log starts over", "to", o, "at", at,
			"log_start", p.mu.logStart, "log_end", end)
		return p.truncateFullyLocked(at, at)
	}
	switch {
	case cut < p.mu.highWatermark && p.mu.hwFromRestart:
		p.logger.Info("truncating records the leader does not have, written before this replica restarted", "to", cut,
			"log_end", end)
	case cut < p.mu.highWatermark:
		p.logger.Warn("truncating below the high watermark (unclean leader election?)", "to", cut,
			"high_watermark", p.mu.highWatermark, "log_end", end)
	default:
		p.logger.Info("truncating", "to", cut, "log_end", end)
	}
	p.mu.truncations++
	// The cleaner's checkpoint first: lowered too early it only costs a
	// pass, left high after a crash it would call new batches clean.
	if err := p.clampCleanerCheckpoint(cut); err != nil {
		return err
	}
	if err := p.log.TruncateTo(cut); err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	if err := p.saveEpochsLocked(p.mu.epochs.truncateFromEnd(cut)); err != nil {
		return err
	}
	if err := p.rebuildProducersLocked(); err != nil {
		return fmt.Errorf("partition %v: rebuilding producer state after truncating to %d: %w", p.opts.TP, cut, err)
	}
	p.truncateAbortedLocked(cut)
	p.mu.highWatermark = min(p.mu.highWatermark, cut)
	p.resetActiveLocked(p.opts.Clock.Now())
	p.notifyLocked()
	return nil
}

// batchBoundaryAtOrBelowLocked is where TruncateTo(o) cuts the log, for o
// in [local log start, log end): o if no batch straddles it, else the base
// offset of the batch that does.
func (p *Partition) batchBoundaryAtOrBelowLocked(o base.Offset) (base.Offset, error) {
	b, err := p.log.Read(o, record.HeaderSize, nil)
	if err != nil {
		return 0, fmt.Errorf("partition %v: reading the batch at %d to truncate: %w", p.opts.TP, o, err)
	}
	if len(b) == 0 { // o is in a gap after the last batch
		return o, nil
	}
	h, err := record.ParseHeader(b)
	if err != nil {
		return 0, fmt.Errorf("partition %v: reading the batch at %d to truncate: %w", p.opts.TP, o, err)
	}
	return min(o, h.BaseOffset), nil
}

// rebuildProducersLocked rebuilds producer state after the log was
// truncated, as Open restores it: the newest usable snapshot at or below
// the log end (those past it are removed), then a replay of the log after
// it. The aborted transactions the replay finds are already listed.
func (p *Partition) rebuildProducersLocked() error {
	ps, from, err := p.restoreSnapshot()
	if err != nil {
		return err
	}
	if _, err := p.replayLog(ps, from, p.log.End()); err != nil {
		return err
	}
	p.mu.producers = ps
	return nil
}

// truncateAbortedLocked drops the aborted transactions whose marker is at
// or past end, as Kafka's TransactionIndex.truncateTo does. If the index
// file holds some of them, it is rewritten from the list before anything
// is appended to it (every snapshot write flushes it first), so no later
// Open takes them from it. The aborted index's lock is held.
func (p *Partition) truncateAbortedLocked(end base.Offset) {
	list := p.mu.aborted
	i := sort.Search(len(list), func(i int) bool { return list[i].LastOffset >= end })
	dropped := uint64(len(list) - i)
	if dropped == 0 {
		return
	}
	clear(list[i:])
	p.mu.aborted = list[:i]
	p.mu.abortedNext -= dropped
	if x := &p.txnIndex; x.written > p.mu.abortedNext {
		x.written, x.rewrite = p.mu.abortedNext, true
	}
}

// TruncateFullyAndStartAt deletes a follower's whole local log and starts
// it empty at o, as Kafka's UnifiedLog.truncateFullyAndStartAt does for an
// empty follower or one whose fetch offset is below its leader's log
// start: the log start and the high watermark become o, the leader-epoch
// cache and producer state are emptied, every producer snapshot and
// aborted transaction goes. A leader refuses it with ErrNotFollower.
func (p *Partition) TruncateFullyAndStartAt(o base.Offset) error {
	if o < 0 {
		return fmt.Errorf("partition %v: start over at %d: %w", p.opts.TP, o, ErrOffsetOutOfRange)
	}
	unlock := p.lockForTruncation()
	defer unlock()
	if err := p.checkFollowerLocked(); err != nil {
		return err
	}
	p.logger.Info("truncating fully: the log starts over", "at", o,
		"log_start", p.mu.logStart, "log_end", p.log.End(), "high_watermark", p.mu.highWatermark)
	return p.truncateFullyLocked(o, o)
}

// truncateFullyLocked starts the log over, empty, at at, with the log
// start logStart (at most at, or the log end before, for
// startOverAndAppend, whose append follows at once). Each step leaves
// what Open makes consistent if a crash follows it: the cleaner's
// checkpoint is lowered, the epochs go (no stale lineage survives), then
// the producer snapshots and aborted transactions (a replay of whatever
// log Open finds derives them again), then the log, then the log start.
// Every truncation lock is held.
func (p *Partition) truncateFullyLocked(at, logStart base.Offset) error {
	p.mu.truncations++
	if err := p.clampCleanerCheckpoint(at); err != nil {
		return err
	}
	p.mu.epochs = epochCache{}
	if err := p.writeEpochsLocked(); err != nil {
		return err
	}
	if err := removeAllSnapshots(p.opts.Dir); err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	p.mu.producers = producers.New()
	clear(p.mu.aborted)
	p.mu.aborted, p.mu.abortedNext = p.mu.aborted[:0], 0
	p.txnIndex.written, p.txnIndex.rewrite = 0, true
	if err := p.log.TruncateFullyAndStartAt(at); err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	if logStart != p.mu.logStart {
		if err := writeLogStart(p.opts.Dir, logStart); err != nil {
			return err
		}
		p.mu.logStart = logStart
	}
	p.mu.highWatermark = max(at, logStart)
	p.resetActiveLocked(p.opts.Clock.Now())
	p.notifyLocked()
	return nil
}

// removeAllSnapshots removes every producer snapshot file, durably.
func removeAllSnapshots(dir string) error {
	offs, err := listSnapshots(dir)
	if err != nil || len(offs) == 0 {
		return err
	}
	for _, o := range offs {
		if err := os.Remove(filepath.Join(dir, snapshotName(o))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing producer snapshot %s: %w", snapshotName(o), err)
		}
	}
	return vfs.SyncDir(dir)
}

// clampCleanerCheckpoint lowers the cleaner's first dirty offset to end
// when the log was truncated below it (Kafka's
// LogCleanerManager.maybeTruncateCheckpoint): a new leader's batches there
// are not clean. cleanerCheckpoint is held.
func (p *Partition) clampCleanerCheckpoint(end base.Offset) error {
	cp, ok, err := readCleanerCheckpoint(p.opts.Dir)
	if err != nil || !ok || cp.FirstDirty <= end {
		return err
	}
	cp.FirstDirty = end
	if err := writeCleanerCheckpoint(p.opts.Dir, cp); err != nil {
		return fmt.Errorf("partition %v: cleaner checkpoint: %w", p.opts.TP, err)
	}
	return nil
}
