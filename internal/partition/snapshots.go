package partition

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/vfs"
)

// Producer-state snapshots are files named, as in Kafka, by the 20-digit
// offset they are valid at: 00000000000000001234.snapshot holds the state
// after every batch below offset 1234 and none at or after it. One is
// written when a segment rolls (at the new segment's base offset) and one
// at a clean Close (at the log end); the newest snapshotsKept are kept.
// A tiered partition keeps every snapshot at or above its local log start
// (as Kafka keeps one per segment): the tier uploads the snapshot at each
// segment's end with the segment, which may be long after the roll, and a
// follower rebuilds its producer state from it (KIP-405).
// The content is producers.State.Snapshot(), which carries its own
// checksum; the offset is the name's.
const (
	snapshotSuffix = ".snapshot"
	snapshotsKept  = 2
	// legacySnapshotFile is the single clean-close snapshot of earlier
	// versions; Open removes it (its state is rebuilt by a replay once).
	legacySnapshotFile = "producer-state.snapshot"
)

// producerSnapshot is an encoded State valid at At, waiting to be written.
// truncations is the partition's truncation count when it was taken: a
// truncation since may have removed what it describes.
type producerSnapshot struct {
	At          base.Offset
	Data        []byte
	truncations uint64
}

// producerSnapshotLocked takes the producer state as a snapshot valid at
// at, the log end or the base of the segment an append just began.
func (p *Partition) producerSnapshotLocked(at base.Offset) *producerSnapshot {
	return &producerSnapshot{At: at, Data: p.mu.producers.Snapshot(), truncations: p.mu.truncations}
}

func snapshotName(o base.Offset) string {
	return base.OffsetName(o) + snapshotSuffix
}

func parseSnapshotName(name string) (base.Offset, bool) {
	digits, ok := strings.CutSuffix(name, snapshotSuffix)
	if !ok {
		return 0, false
	}
	return base.ParseOffsetName(digits)
}

// listSnapshots returns the offsets of the snapshot files in dir, ascending.
func listSnapshots(dir string) ([]base.Offset, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing producer snapshots: %w", err)
	}
	var out []base.Offset
	for _, e := range entries {
		if o, ok := parseSnapshotName(e.Name()); ok && e.Type().IsRegular() {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out, nil
}

// decodeSnapshot is the gateway for a snapshot file: producers.Restore
// checks the encoding, and every batch and open transaction it remembers
// must lie below the offset the file is named by.
func decodeSnapshot(data []byte, at base.Offset) (*producers.State, error) {
	ps, err := producers.Restore(data)
	if err != nil {
		return nil, err
	}
	for _, e := range ps.Entries() {
		if n := len(e.Batches); n > 0 && e.Batches[n-1].LastOffset >= at {
			return nil, fmt.Errorf("%w: producer %d has a batch ending at %d, not below %d",
				producers.ErrCorruptSnapshot, e.ProducerID, e.Batches[n-1].LastOffset, at)
		}
		if first, open := e.CurrentTxnFirstOffset.Get(); open && first >= at {
			return nil, fmt.Errorf("%w: producer %d has a transaction from %d, not below %d",
				producers.ErrCorruptSnapshot, e.ProducerID, first, at)
		}
	}
	return ps, nil
}

// writeSnapshot writes s crash-safely and deletes all but the newest
// snapshotsKept snapshots. It is called without mu, so its fsyncs never
// stall appends; snapFiles orders it against other writers.
//
// The aborted-transaction index is made durable first: Open replays the
// log only from the newest snapshot, so every abort below s.At (each was
// listed before s was taken) must be in the index file before s exists.
//
// A snapshot taken before a truncation (TruncateTo, TruncateFullyAndStartAt)
// is dropped: it may describe batches the truncation removed. A truncation
// holds snapFiles while it removes the snapshots past its offset, so a
// snapshot written before it is removed then if it must be.
func (p *Partition) writeSnapshot(s producerSnapshot) error {
	p.snapFiles.Lock()
	defer p.snapFiles.Unlock()
	p.mu.Lock()
	stale := s.truncations != p.mu.truncations
	tiered, localStart := p.mu.cfg.Tiered, p.log.Start()
	p.mu.Unlock()
	if stale {
		return nil
	}
	if err := p.flushAbortedIndex(); err != nil {
		return fmt.Errorf("producer snapshot at %d not written: %w", s.At, err)
	}
	if err := vfs.WriteFileAtomic(p.opts.Dir, snapshotName(s.At), s.Data); err != nil {
		return fmt.Errorf("writing producer snapshot at %d: %w", s.At, err)
	}
	offs, err := listSnapshots(p.opts.Dir)
	if err != nil {
		return err
	}
	// Unlinks need no directory fsync: an older snapshot that comes back
	// after a crash is still valid, or is discarded by Open.
	for _, o := range snapshotsToPrune(offs, tiered, localStart) {
		if err := os.Remove(filepath.Join(p.opts.Dir, snapshotName(o))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing old producer snapshot: %w", err)
		}
	}
	return nil
}

// snapshotsToPrune picks, from the snapshot offsets offs (ascending), the
// ones to delete: all but the newest snapshotsKept, or, for a tiered
// partition, those below the local log start (still keeping the newest
// snapshotsKept).
func snapshotsToPrune(offs []base.Offset, tiered bool, localStart base.Offset) []base.Offset {
	old := offs[:max(0, len(offs)-snapshotsKept)]
	if !tiered {
		return old
	}
	n := 0
	for n < len(old) && old[n] < localStart {
		n++
	}
	return old[:n]
}

// writeSnapshotLogged writes a snapshot taken at a roll. A failure costs
// only a longer replay after a crash, so it is logged, not returned: the
// append it follows has succeeded.
func (p *Partition) writeSnapshotLogged(s *producerSnapshot) {
	if s == nil {
		return
	}
	if err := p.writeSnapshot(*s); err != nil {
		p.logger.Warn("producer snapshot not written; recovery will replay further", "at", s.At, "err", err)
	}
}

// restoreSnapshot returns the state of the newest usable snapshot and the
// offset to replay the log from. Snapshots past the log end describe data
// lost in a crash (written after an append but before its fsync) and are
// removed durably before anything can be appended over their offsets;
// corrupt ones are removed too. Without a usable snapshot the whole local
// log is replayed.
func (p *Partition) restoreSnapshot() (*producers.State, base.Offset, error) {
	dir := p.opts.Dir
	if err := os.Remove(filepath.Join(dir, legacySnapshotFile)); err == nil {
		p.logger.Info("removed a producer snapshot of the old format; replaying the log")
	}
	offs, err := listSnapshots(dir)
	if err != nil {
		return nil, 0, err
	}
	start, end := p.log.Start(), p.log.End()
	removed := false
	remove := func(o base.Offset) error {
		removed = true
		if err := os.Remove(filepath.Join(dir, snapshotName(o))); err != nil {
			return fmt.Errorf("removing producer snapshot %s: %w", snapshotName(o), err)
		}
		return nil
	}
	var found *producers.State
	from := start
	for _, o := range slices.Backward(offs) {
		if o > end {
			if err := remove(o); err != nil {
				return nil, 0, err
			}
			continue
		}
		if found != nil || o < start {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, snapshotName(o)))
		if err == nil {
			found, err = decodeSnapshot(data, o)
		}
		if err != nil {
			p.logger.Warn("producer snapshot unusable; trying an older one", "file", snapshotName(o), "err", err)
			if err := remove(o); err != nil {
				return nil, 0, err
			}
			continue
		}
		from = o
	}
	if removed {
		if err := vfs.SyncDir(dir); err != nil {
			return nil, 0, err
		}
	}
	if found == nil {
		found = producers.New()
	}
	return found, from, nil
}
