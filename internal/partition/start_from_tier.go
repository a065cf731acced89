package partition

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/vfs"
)

// TierStart is the state a follower starts over with when it rebuilds
// what its leader's remote tier holds instead of fetching it (KIP-405's
// "auxiliary state", Kafka's TierStateMachine.buildRemoteLogAuxState):
// the remote segment ending at LocalStart carries the producer state
// there, and the remote segments of [LogStart, LocalStart) carry its
// leader-epoch lineage and aborted transactions.
type TierStart struct {
	// LocalStart is where the local log starts over, empty: the end of
	// the remote segment the producer snapshot comes from.
	LocalStart base.Offset
	// LogStart is the new log start, at most LocalStart; [LogStart,
	// LocalStart) is in the remote tier.
	LogStart base.Offset
	// Lineage is the leader-epoch lineage of [LogStart, LocalStart):
	// ascending in epoch and in start, the first starting at LogStart,
	// every one below LocalStart. Empty only when LogStart == LocalStart.
	Lineage []base.EpochStart
	// ProducerSnapshot is the producer state valid at LocalStart, as
	// producers.State.Snapshot encodes it (the remote segment's snapshot
	// object); nil starts with no producer.
	ProducerSnapshot []byte
	// Aborted are the aborted transactions whose marker is in [LogStart,
	// LocalStart), ascending by marker (the remote segments' transaction
	// indexes), so that read_committed reads of the remote offsets skip
	// them here as on the leader.
	Aborted []AbortedTxn
}

// ErrBadTierStart refuses a StartOverFromTier whose state does not hold
// together (offsets, lineage, snapshot, aborted transactions); nothing
// changes.
var ErrBadTierStart = errors.New("partition: unusable state from the remote tier")

// ErrStartNotTiered refuses a StartOverFromTier of a partition whose topic
// is not tiered (remote.storage.enable=false here): its log could not
// hold offsets below its local log start across a restart (Kafka retries
// until tiering is on).
var ErrStartNotTiered = errors.New("partition: the topic is not tiered here; it cannot start over from the remote tier")

// tierStartName is StartOverFromTier's intent file: while it exists, the
// partition's files are being replaced by a TierStart's. Open finds it
// only after a crash midway, and then empties the partition at offset 0
// (recoverTierStart), so that its fetcher rebuilds the state again: a
// half-installed state (a log that claims remote offsets without their
// epochs or producer state) is never served.
const tierStartName = "tier-start"

// StartOverFromTier replaces a follower's log by s: what
// TruncateFullyAndStartAt(s.LocalStart) does, and then the log start
// becomes s.LogStart (the remote tier holds the offsets below the local
// log start), the leader-epoch cache s.Lineage, the producer state
// s.ProducerSnapshot (decoded and checked as a snapshot file is) and the
// aborted-transaction list s.Aborted; all are durable, with a producer
// snapshot file at s.LocalStart, before it returns. The high watermark is
// s.LocalStart until the leader's answers move it.
//
// It is crash-safe: an intent file is written first and removed last, and
// Open empties a partition that still has one (recoverTierStart). s is
// checked before anything changes (ErrBadTierStart). A leader refuses it
// with ErrNotFollower, an untiered partition with ErrStartNotTiered.
func (p *Partition) StartOverFromTier(s TierStart) error {
	epochs, ps, aborted, err := s.check()
	if err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	unlock := p.lockForTruncation()
	defer unlock()
	if err := p.checkFollowerLocked(); err != nil {
		return err
	}
	if !p.mu.cfg.Tiered {
		return fmt.Errorf("partition %v: %w", p.opts.TP, ErrStartNotTiered)
	}
	p.logger.Info("starting over from the remote tier", "local_log_start", s.LocalStart, "log_start", s.LogStart,
		"epochs", len(epochs.entries), "producers", ps.Len(), "aborted_txns", len(aborted),
		"old_log_start", p.mu.logStart, "old_log_end", p.log.End())
	dir := p.opts.Dir
	if err := vfs.WriteFileAtomic(dir, tierStartName, []byte(strconv.FormatInt(int64(s.LocalStart), 10)+"\n")); err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	if err := p.truncateFullyLocked(s.LocalStart, s.LocalStart); err != nil {
		return err
	}
	if err := p.installTierStartLocked(s, epochs, ps, aborted); err != nil {
		return fmt.Errorf("partition %v: starting over from the remote tier: %w", p.opts.TP, err)
	}
	if err := os.Remove(filepath.Join(dir, tierStartName)); err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	if err := vfs.SyncDir(dir); err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	p.notifyLocked()
	return nil
}

// installTierStartLocked writes s's state over the empty log at
// s.LocalStart and takes it: the aborted-transaction index (before the
// snapshot, as writeSnapshot orders them), the producer snapshot at
// s.LocalStart, the epoch checkpoint, then the log start. Every
// truncation lock is held.
func (p *Partition) installTierStartLocked(s TierStart, epochs epochCache, ps *producers.State, aborted []AbortedTxn) error {
	dir := p.opts.Dir
	x := &p.txnIndex
	x.closeFileLocked()
	if err := vfs.WriteFileAtomic(dir, abortedIndexFile, encodeAbortedEntries(aborted)); err != nil {
		x.rewrite = true
		return err
	}
	p.mu.aborted, p.mu.abortedNext = aborted, uint64(len(aborted))
	x.written, x.fileEntries, x.rewrite = p.mu.abortedNext, len(aborted), false
	if err := vfs.WriteFileAtomic(dir, snapshotName(s.LocalStart), ps.Snapshot()); err != nil {
		return err
	}
	p.mu.producers = ps
	p.mu.epochs = epochs
	if err := p.writeEpochsLocked(); err != nil {
		return err
	}
	if err := writeLogStart(dir, s.LogStart); err != nil {
		return err
	}
	p.mu.logStart = s.LogStart
	p.mu.highWatermark = s.LocalStart
	return nil
}

// check is the gateway for a TierStart, which comes from the bucket and
// the quorum: it returns the epoch cache, producer state and aborted list
// to install, or an error wrapping ErrBadTierStart.
func (s TierStart) check() (epochCache, *producers.State, []AbortedTxn, error) {
	bad := func(format string, args ...any) (epochCache, *producers.State, []AbortedTxn, error) {
		return epochCache{}, nil, nil, fmt.Errorf("%w: %s", ErrBadTierStart, fmt.Sprintf(format, args...))
	}
	if s.LogStart < 0 || s.LocalStart < s.LogStart {
		return bad("log start %d, local log start %d", s.LogStart, s.LocalStart)
	}
	var epochs epochCache
	for i, e := range s.Lineage {
		switch {
		case e.Epoch < 0 || e.Start >= s.LocalStart || (i == 0 && e.Start != s.LogStart):
			return bad("lineage entry %d %v outside [%d, %d)", i, e, s.LogStart, s.LocalStart)
		case i > 0 && e.Start <= s.Lineage[i-1].Start:
			return bad("lineage starts not ascending at entry %d: %v", i, s.Lineage)
		case !epochs.assign(e.Epoch, e.Start):
			return bad("lineage epochs not ascending at entry %d: %v", i, s.Lineage)
		}
	}
	if len(s.Lineage) == 0 && s.LogStart < s.LocalStart {
		return bad("no lineage for the remote offsets [%d, %d)", s.LogStart, s.LocalStart)
	}
	ps := producers.New()
	if s.ProducerSnapshot != nil {
		var err error
		if ps, err = decodeSnapshot(s.ProducerSnapshot, s.LocalStart); err != nil {
			return bad("producer snapshot at %d: %v", s.LocalStart, err)
		}
	}
	aborted := make([]AbortedTxn, 0, len(s.Aborted))
	for i, t := range s.Aborted {
		switch {
		case t.ProducerID < 0 || t.FirstOffset < 0 || t.FirstOffset > t.LastOffset || t.LastOffset >= s.LocalStart:
			return bad("aborted transaction %d %+v outside the remote offsets below %d", i, t, s.LocalStart)
		case i > 0 && t.LastOffset <= s.Aborted[i-1].LastOffset:
			return bad("aborted transactions not ascending at %d", i)
		case t.LastOffset < s.LogStart:
			continue // outside the log, as the list keeps it (pruneAbortedLocked)
		}
		aborted = append(aborted, t)
	}
	return epochs, ps, aborted, nil
}

// recoverTierStart finishes, at Open, a StartOverFromTier that a crash
// interrupted: whatever it had installed goes and the partition is empty
// at offset 0, with no epochs, producer snapshots, aborted transactions or
// cleaner checkpoint, as a new replica's. Its fetcher then finds it behind
// its leader and rebuilds its state again. Each step can be repeated; the
// intent file goes last. It runs before load reads any of those files.
func (p *Partition) recoverTierStart() error {
	dir := p.opts.Dir
	if _, err := os.Stat(filepath.Join(dir, tierStartName)); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	p.logger.Warn("a start over from the remote tier was interrupted; the partition starts empty and rebuilds its state")
	if err := p.log.TruncateFullyAndStartAt(0); err != nil {
		return err
	}
	for _, name := range []string{epochCheckpointFile, abortedIndexFile, cleanerCheckpointFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := removeAllSnapshots(dir); err != nil {
		return err
	}
	if err := writeLogStart(dir, 0); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, tierStartName)); err != nil {
		return err
	}
	return vfs.SyncDir(dir)
}
