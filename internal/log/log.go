package log

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/invariants"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// Log is the local segmented log of one partition directory. It is safe for
// concurrent use; the partition is expected to be its only appender.
type Log struct {
	dir   string      // Options.Dir; never changes
	clock clock.Clock // Options.Clock; never changes
	fs    vfs.FS      // Options.FS, or vfs.Default; never changes
	// onFail is Options.OnFail; never changes.
	onFail func(error)
	// onSync is Options.OnSync; never changes.
	onSync func(time.Duration)
	// zeroKick wakes the zero filler (Options.ZeroFill; nil without it).
	// Sent to and closed under mu.
	zeroKick chan struct{}

	// lifecycle is held shared by file I/O done without mu (reads, fdatasync)
	// and exclusively by operations that shrink or close files. Taken before mu.
	lifecycle sync.RWMutex

	mu struct {
		sync.Mutex
		opts        Options    // the tunables may change (SetOptions)
		segs        []*segment // they tile the offsets; the last is active; never empty while open
		durableEnd  base.Offset
		persistedRP base.Offset   // recovery point last written to disk
		syncing     chan struct{} // closed when the in-flight Sync finishes; nil if none
		dirDirty    bool          // segment files were created since the last dir fsync
		failed      error         // sticky I/O error: the log is fail-stop
		closed      bool
		rate        appendRate // whether zero-filling pays (ZeroFill)
		replacing   bool       // a Replacement is neither committed nor dropped (replace.go)
		pacer       syncPacer  // spaces back-to-back sync rounds (sync_pace.go)
	}
}

func (l *Log) activeLocked() *segment { return l.mu.segs[len(l.mu.segs)-1] }

// usableLocked is the error every mutating call returns once the log is closed
// or has failed.
func (l *Log) usableLocked() error {
	if l.mu.closed {
		return ErrClosed
	}
	return l.mu.failed
}

// failLocked makes err sticky and returns it. The first one is reported to
// Options.OnFail.
func (l *Log) failLocked(err error) error {
	if l.mu.failed == nil {
		l.mu.failed = err
		if l.onFail != nil {
			l.onFail(err)
		}
	}
	return err
}

// Failed is the I/O error that made the log fail-stop, or nil.
func (l *Log) Failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.failed
}

// Start is the base offset of the first segment: the local log start.
func (l *Log) Start() base.Offset {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.segs[0].baseOffset
}

// End is the next offset to assign, the log end offset.
func (l *Log) End() base.Offset {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.activeLocked().nextOffset
}

// DurableEnd is the offset below which everything has been fdatasync'ed.
func (l *Log) DurableEnd() base.Offset {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.durableEnd
}

// Append writes batches, one or more concatenated v2 batches whose base offsets
// are already assigned, the first equal to End(). It checks every batch (framing,
// magic, CRC, contiguity) before writing any, writes through the page cache
// without fsync, updates the sparse indexes, and rolls before a batch that would
// overflow the active segment. If a write fails, a prefix of the batches may be
// in the log (End() tells) and the log is failed.
func (l *Log) Append(batches []byte) error { return l.append(batches, false) }

// AppendReplicated is Append for batches whose offsets another log
// assigned (a follower appending its leader's batches, as Kafka's
// appendAsFollower does): offsets need only increase. The first batch
// starts at or after End(), each later one after the last offset of the
// one before; a batch that overlaps or goes back is refused with
// ErrNotContiguous and nothing is written. The offsets skipped (where the
// leader's cleaner removed records) are a gap, as in a compacted segment:
// reads at an offset inside it serve the next batch. End() becomes one
// past the last batch's last offset. A batch that rolls the active segment
// goes first in the new one, which starts at End() (the gap is inside it),
// or, for a batch past the reach of an index based there, at the batch
// (see rollAt).
func (l *Log) AppendReplicated(batches []byte) error { return l.append(batches, true) }

// append is Append, or with gaps allowed AppendReplicated.
func (l *Log) append(batches []byte, gaps bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	if err := validateBatches(batches, l.activeLocked().nextOffset, gaps); err != nil {
		return err
	}
	now := l.clock.Now()
	for off := 0; off < len(batches); {
		hdr, _ := record.ParseHeader(batches[off:]) // validated above
		h := &hdr
		b := batches[off : off+h.Size()]
		seg := l.activeLocked()
		if seg.shouldRoll(h, l.mu.opts, now) {
			if err := l.rollLocked(rollAt(seg, h)); err != nil {
				return err
			}
			seg = l.activeLocked()
		}
		pos := seg.sizeBytes
		seg.ensurePrealloc(pos+int64(len(b)), l.mu.opts.SegmentBytes)
		if _, err := seg.file.WriteAt(b, pos); err != nil {
			// Cut any partial write so the file stays whole batches.
			_ = seg.file.Truncate(pos)
			return l.failLocked(fmt.Errorf("log: append: %w", err))
		}
		seg.noteBatch(h, pos, l.mu.opts.IndexIntervalBytes, now)
		off += len(b)
	}
	l.mu.rate.add(int64(len(batches)), now)
	l.kickZeroFillLocked()
	return nil
}

// validateBatches checks that b is whole v2 batches whose offsets run
// contiguously from next, or, with gaps, ascend from next (each batch
// starting at or after the end of the one before); in invariants builds
// it also checks their CRCs.
func validateBatches(b []byte, next base.Offset, gaps bool) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: no batches", ErrInvalidBatch)
	}
	for off := 0; off < len(b); {
		h, err := frameAt(b, off)
		if err != nil {
			return err
		}
		// The produce gateway (record.Validate) checked the CRC; rechecking
		// every byte here costs as much as the write, so only assertion
		// builds do it.
		if invariants.Enabled && !batchCRCValid(b[off:off+h.Size()]) {
			return fmt.Errorf("%w: CRC mismatch in batch at offset %d", ErrInvalidBatch, h.BaseOffset)
		}
		if h.BaseOffset != next && (!gaps || h.BaseOffset < next) {
			return fmt.Errorf("%w: batch base offset %d, want %d%s", ErrNotContiguous, h.BaseOffset, next, orMore(gaps))
		}
		next = h.NextOffset()
		off += h.Size()
	}
	return nil
}

// orMore completes validateBatches' error for an append that takes gaps.
func orMore(gaps bool) string {
	if gaps {
		return " or more"
	}
	return ""
}

// frameAt parses the header of the batch at b[off:] and checks that the
// batch is whole and well framed; the error wraps ErrInvalidBatch.
func frameAt(b []byte, off int) (record.Header, error) {
	h, err := record.ParseHeader(b[off:])
	if err != nil {
		return h, fmt.Errorf("%w: %d trailing bytes", ErrInvalidBatch, len(b)-off)
	}
	if err := checkFraming(&h, int64(len(b)-off)); err != nil {
		return h, fmt.Errorf("%w: %w", ErrInvalidBatch, err)
	}
	return h, nil
}

// Roll seals the active segment and starts a new one at End(). Rolling an
// empty active segment does nothing.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	a := l.activeLocked()
	if a.empty() {
		return nil
	}
	return l.rollLocked(a.nextOffset)
}

// rollAt is where an append rolls the active segment a for the batch h:
// at a's next offset (End(), h's base offset for a leader's Append), so
// that a gap before h lies inside the new segment, where recovery keeps
// it whatever the recovery point, unless h's last offset is past the reach
// of an index based there (a gap of over 2^32 offsets): then at h, as
// Kafka's maybeRoll always does, and the gap lies between the segments.
func rollAt(a *segment, h *record.Header) base.Offset {
	if int64(h.LastOffset()-a.nextOffset) > math.MaxUint32 {
		return h.BaseOffset
	}
	return a.nextOffset
}

// rollLocked writes the sealed segment's index files (fsync'ed by the next
// Sync, which then advances the recovery point) and creates the new segment
// at at, which is at or after the sealed segment's next offset. If it is
// past the sealed segment's data, the sealed segment's range ends there, a
// gap between the segments, which recovery keeps only once the recovery
// point covers it (see doc.go).
func (l *Log) rollLocked(at base.Offset) error {
	sealed := l.activeLocked()
	if invariants.Enabled && at < sealed.nextOffset {
		panic(fmt.Sprintf("log: roll at %d, below the active segment's next offset %d", at, sealed.nextOffset))
	}
	if err := sealed.flushIndexes(); err != nil {
		return l.failLocked(err)
	}
	if err := sealed.releasePrealloc(); err != nil {
		return l.failLocked(err)
	}
	sealed.indexDurable = false
	next, err := createSegment(l.dir, at, l.mu.opts)
	if err != nil {
		return l.failLocked(err)
	}
	sealed.nextOffset = at
	l.mu.segs = append(l.mu.segs, next)
	l.mu.dirDirty = true
	return nil
}

// Close syncs everything, writes the index files, the recovery point and the
// clean-shutdown marker, and closes the files. If End() is past the active
// segment's data (TruncateTo into a gap), it first rolls there, so that a
// reopen finds the same End(). It waits for in-flight reads and syncs.
// Calling it again returns nil.
func (l *Log) Close() error {
	l.lifecycle.Lock()
	defer l.lifecycle.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	err := l.shutdownLocked()
	for _, s := range l.mu.segs {
		_ = s.file.Close() // data already synced, or err reports why not
	}
	l.mu.closed = true
	if l.zeroKick != nil {
		close(l.zeroKick)
	}
	return err
}

// Discard closes the log without making anything durable: its directory is
// about to be removed (a deleted partition), and syncing data nobody will
// read would only hold up every other log's syncs on the disk. Like Close it
// waits for the file I/O in flight; a later Sync or Append fails as on a
// closed log. A closed log is left as it is.
func (l *Log) Discard() {
	l.lifecycle.Lock()
	defer l.lifecycle.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return
	}
	for _, s := range l.mu.segs {
		_ = s.file.Close() // nothing here is kept
	}
	l.mu.closed = true
	if l.zeroKick != nil {
		close(l.zeroKick)
	}
}

func (l *Log) shutdownLocked() error {
	if l.mu.failed != nil {
		return l.mu.failed
	}
	if a := l.activeLocked(); a.dataEnd < a.nextOffset {
		// End is past the data (TruncateTo into a gap). A reopen takes
		// End from the last segment's data; an empty segment at End keeps
		// it, which the recovery point written below covers.
		if err := l.rollLocked(a.nextOffset); err != nil {
			return err
		}
	}
	for _, s := range l.mu.segs {
		if err := s.flushIndexes(); err != nil {
			return err
		}
		if err := s.releasePrealloc(); err != nil {
			return err
		}
		if !s.indexDurable {
			if err := syncIndexFiles(s); err != nil {
				return err
			}
			s.indexDurable = true
		}
		if s.syncedBytes < s.sizeBytes || s.sizeDirty {
			if err := fdatasync(s); err != nil {
				return err
			}
			s.syncedBytes, s.sizeDirty = s.sizeBytes, false
		}
	}
	if err := syncDir(l.fs, l.dir); err != nil {
		return err
	}
	end := l.activeLocked().nextOffset
	l.mu.durableEnd = end
	if err := writeRecoveryPoint(l.fs, l.dir, end); err != nil {
		return err
	}
	return writeFileAtomic(l.fs, l.dir, cleanShutdownName, nil)
}

// SetOptions applies changed topic configs. Dir, Clock, FS, OnFail and
// OnSync cannot change; those of o are ignored. The
// new sizes apply from the next append: a smaller SegmentBytes or
// SegmentIndexBytes rolls the active segment then.
func (l *Log) SetOptions(o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Dir != l.dir {
		return fmt.Errorf("%w: Dir cannot change from %q to %q", ErrInvalidOptions, l.dir, o.Dir)
	}
	o.Clock, o.FS, o.ZeroFill, o.OnFail, o.OnSync = l.clock, l.fs, l.zeroKick != nil, l.onFail, l.onSync
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.opts = o
	a := l.activeLocked()
	a.offsetIndex.maxEntries = o.SegmentIndexBytes / offsetEntrySize
	a.timeIndex.maxEntries = o.SegmentIndexBytes / timeEntrySize
	return nil
}
