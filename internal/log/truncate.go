package log

import (
	"fmt"
	"sort"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// segmentIndexLocked returns the index of the segment holding o, for
// Start() <= o < End().
func (l *Log) segmentIndexLocked(o base.Offset) int {
	segs := l.mu.segs
	return sort.Search(len(segs), func(i int) bool { return segs[i].baseOffset > o }) - 1
}

// TruncateTo drops every offset at and after o, which must be End() or the base
// offset of a batch in [Start(), End()). Segments after o's are deleted, o's
// segment is cut and becomes the active one. The cut is fdatasync'ed before
// TruncateTo returns, so truncated data cannot come back after a crash.
func (l *Log) TruncateTo(o base.Offset) error {
	l.lifecycle.Lock()
	defer l.lifecycle.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	end := l.activeLocked().nextOffset
	if o == end {
		return nil
	}
	if o < l.mu.segs[0].baseOffset || o > end {
		return fmt.Errorf("%w: truncate to %d outside [%d, %d]", ErrOffsetOutOfRange, o, l.mu.segs[0].baseOffset, end)
	}
	i := l.segmentIndexLocked(o)
	s := l.mu.segs[i]
	pos, err := batchStartingAt(s, o)
	if err != nil {
		return err
	}
	// Order matters for a crash in the middle: first make recovery scan s, then
	// remove later segments, then cut s. Each intermediate state recovers to a
	// contiguous prefix of the old log.
	if l.mu.persistedRP > s.baseOffset {
		if err := writeRecoveryPoint(l.fs, l.dir, s.baseOffset); err != nil {
			return l.failLocked(err)
		}
		l.mu.persistedRP = s.baseOffset
	}
	if err := removeSegmentFiles(l.fs, l.mu.segs[i+1:], l.dir); err != nil {
		return l.failLocked(err)
	}
	clear(l.mu.segs[i+1:])
	l.mu.segs = l.mu.segs[:i+1]
	if err := s.file.Truncate(pos); err != nil {
		return l.failLocked(fmt.Errorf("log: truncate: %w", err))
	}
	s.preallocEnd, s.zeroedEnd, s.sizeDirty = 0, 0, false // fdatasync'ed next
	if err := fdatasync(s); err != nil {
		return l.failLocked(err)
	}
	s.offsetIndex.truncateAt(s.rel(o))
	s.timeIndex.truncateAt(s.rel(o))
	s.indexDurable = false
	if err := s.flushIndexes(); err != nil {
		return l.failLocked(err)
	}
	if err := recomputeTail(s, pos); err != nil {
		return l.failLocked(err)
	}
	s.syncedBytes = min(s.syncedBytes, pos)
	if s.empty() {
		s.rollStartAt = l.clock.Now()
	}
	l.mu.durableEnd = min(l.mu.durableEnd, o)
	return nil
}

// batchStartingAt returns the position of the batch of s whose base offset is
// o, or ErrNotBatchBoundary.
func batchStartingAt(s *segment, o base.Offset) (int64, error) {
	var scratch [record.HeaderSize]byte
	pos := int64(s.offsetIndex.lookup(s.rel(o)))
	for pos < s.sizeBytes {
		h, err := readHeaderAt(s.file, pos, s.sizeBytes, scratch[:])
		if err != nil {
			return 0, err
		}
		if h.BaseOffset == o {
			return pos, nil
		}
		if h.NextOffset() > o {
			return 0, fmt.Errorf("%w: %d is inside batch [%d, %d)", ErrNotBatchBoundary, o, h.BaseOffset, h.NextOffset())
		}
		pos += int64(h.Size())
	}
	return 0, fmt.Errorf("%w: no batch at %d", ErrCorrupt, o)
}

// DeleteSegmentsBefore deletes the sealed segments whose NextOffset <= o, from
// the start of the log; never the active segment. Each is renamed to .deleted,
// the directory is fsync'ed, then the files are unlinked, so a crash never
// leaves a gap: Open removes .deleted files and keeps the rest.
func (l *Log) DeleteSegmentsBefore(o base.Offset) error {
	l.lifecycle.Lock()
	defer l.lifecycle.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	n := 0
	for n < len(l.mu.segs)-1 && l.mu.segs[n].nextOffset <= o {
		n++
	}
	if n == 0 {
		return nil
	}
	if err := removeSegmentFiles(l.fs, l.mu.segs[:n], l.dir); err != nil {
		return l.failLocked(err)
	}
	l.mu.segs = append(l.mu.segs[:0:0], l.mu.segs[n:]...)
	return nil
}
