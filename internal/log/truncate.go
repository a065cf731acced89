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

// TruncateTo drops every offset at and after o, which must be in
// [Start(), End()] and not inside a batch (past its base offset);
// afterwards End() == o. The log is cut before the first batch at or after
// o: o may fall in a gap (of a compacted segment, or of one that
// AppendReplicated wrote), and the batches below it stay. Segments after
// o's are deleted. If o's segment is the active one, or what stays of it
// runs contiguously from its base to o, it is cut and becomes the active
// one, its next offset o (its data may end short of o: the gap stays, and
// a crash before the next append takes End() back to the data's end,
// where nothing was lost); otherwise it stays sealed, ending at o, and a
// new empty active segment starts at o. The cut is fdatasync'ed before
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
	active := i == len(l.mu.segs)-1
	c, err := l.mu.segs[i].cutAt(o, !active)
	if err != nil {
		return err
	}
	if active || (c.gapFree && c.keptEnd == o) {
		return l.truncateIntoLocked(i, o, c)
	}
	return l.truncateSealedLocked(i, o, c)
}

// truncateIntoLocked cuts segs[i] at c.pos, where the batch at o starts
// (or its data ends), and makes it the active segment, ending at o.
func (l *Log) truncateIntoLocked(i int, o base.Offset, c cutPoint) error {
	s := l.mu.segs[i]
	// Order matters for a crash in the middle: first make recovery scan s, then
	// remove later segments, then cut s. Each intermediate state recovers to a
	// prefix of the old log.
	pos := c.pos
	if l.mu.persistedRP > s.baseOffset {
		if err := writeRecoveryPoint(l.fs, l.dir, s.baseOffset); err != nil {
			return l.failLocked(err)
		}
		l.mu.persistedRP = s.baseOffset
	}
	if err := l.removeTailLocked(i + 1); err != nil {
		return err
	}
	if err := s.file.Truncate(pos); err != nil {
		return l.failLocked(fmt.Errorf("log: truncate: %w", err))
	}
	s.cuts++
	s.preallocEnd, s.zeroedEnd, s.sizeDirty = 0, 0, false // fdatasync'ed next
	if err := fdatasync(s); err != nil {
		return l.failLocked(err)
	}
	s.dropIndexEntriesFrom(o)
	s.indexDurable = false
	if err := s.flushIndexes(); err != nil {
		return l.failLocked(err)
	}
	if err := recomputeTail(s, pos); err != nil {
		return l.failLocked(err)
	}
	// A gap between the data and o is found by the next append
	// (noteBatch).
	s.gapFree = c.gapFree
	s.nextOffset = o
	s.syncedBytes = min(s.syncedBytes, pos)
	if s.empty() {
		s.rollStartAt = l.clock.Now()
	}
	l.mu.durableEnd = min(l.mu.durableEnd, o)
	return nil
}

// truncateSealedLocked truncates at o inside the sealed segment segs[i]
// whose batches below o do not run contiguously up to o: segs[i] is cut
// at c.pos and stays sealed with its range ending at o, and a new empty
// active segment starts at o.
//
// The recovery point is lowered to o at most (not to segs[i]'s base, as
// truncateIntoLocked does), so that segs[i], when it is below it (a
// compacted copy always is), is not scanned again. A crash between the
// steps leaves segs[i] last (End is then its data end, below o, where no
// data was), or the new segment after it, which recovery keeps once the
// recovery point reaches o (see doc.go). Its index files are durable
// before the new segment makes the recovery point cover it, and the new
// segment is durable before TruncateTo returns.
func (l *Log) truncateSealedLocked(i int, o base.Offset, c cutPoint) error {
	s := l.mu.segs[i]
	if l.mu.persistedRP > o {
		if err := writeRecoveryPoint(l.fs, l.dir, o); err != nil {
			return l.failLocked(err)
		}
		l.mu.persistedRP = o
	}
	if err := l.removeTailLocked(i + 1); err != nil {
		return err
	}
	s.cuts++
	if c.pos < s.sizeBytes {
		if err := s.file.Truncate(c.pos); err != nil {
			return l.failLocked(fmt.Errorf("log: truncate: %w", err))
		}
	}
	if err := fdatasync(s); err != nil {
		return l.failLocked(err)
	}
	s.dropIndexEntriesFrom(o)
	if err := s.flushIndexes(); err != nil {
		return l.failLocked(err)
	}
	if err := syncIndexFiles(s); err != nil {
		return l.failLocked(err)
	}
	s.indexDurable = true
	gapFree := s.gapFree
	if err := recomputeTail(s, c.pos); err != nil {
		return l.failLocked(err)
	}
	s.gapFree = gapFree && c.gapFree
	s.syncedBytes = c.pos
	s.nextOffset = o
	next, err := createSegment(l.dir, o, l.mu.opts)
	if err != nil {
		return l.failLocked(err)
	}
	l.mu.segs = append(l.mu.segs, next)
	// Without the new segment, a crash would leave segs[i] last and End at
	// its data end, below o and below what DurableEnd promised.
	if err := syncDir(l.fs, l.dir); err != nil {
		return l.failLocked(err)
	}
	l.mu.durableEnd = min(l.mu.durableEnd, o)
	return nil
}

// removeTailLocked deletes segs[i:], newest first.
func (l *Log) removeTailLocked(i int) error {
	if err := removeSegmentFiles(l.fs, reversed(l.mu.segs[i:]), l.dir); err != nil {
		return l.failLocked(err)
	}
	clear(l.mu.segs[i:])
	l.mu.segs = l.mu.segs[:i]
	return nil
}

// cutPoint is where TruncateTo(o) cuts a segment: pos is the first batch
// at or after o (the end of the data if there is none), keptEnd the end of
// the batches before pos (the base offset if none), and gapFree whether
// those batches are known to run contiguously from the base offset.
type cutPoint struct {
	pos     int64
	keptEnd base.Offset
	gapFree bool
}

// cutAt finds where TruncateTo(o) cuts s, or ErrNotBatchBoundary if o is
// inside a batch. A segment known to be gap-free, or any when kept is
// false (the caller needs only pos), is entered through its offset index;
// any other is walked from its start, to learn whether what stays is
// contiguous. Entered through the index, s gives keptEnd only if it is
// gap-free; gapFree is then false unless s is.
func (s *segment) cutAt(o base.Offset, kept bool) (cutPoint, error) {
	c := cutPoint{keptEnd: s.baseOffset, gapFree: true}
	if s.gapFree || !kept {
		if e, ok := s.offsetIndex.lookupEntry(s.relAtMost(o)); ok {
			c.pos, c.keptEnd = int64(e.pos), s.baseOffset+base.Offset(e.rel)
			c.gapFree = s.gapFree
		}
	}
	var scratch [record.HeaderSize]byte
	for c.pos < s.sizeBytes {
		h, err := readHeaderAt(s.file, c.pos, s.sizeBytes, scratch[:])
		if err != nil {
			return cutPoint{}, err
		}
		if h.BaseOffset >= o {
			return c, nil
		}
		if h.NextOffset() > o {
			return cutPoint{}, fmt.Errorf("%w: %d is inside batch [%d, %d)", ErrNotBatchBoundary, o, h.BaseOffset, h.NextOffset())
		}
		if h.BaseOffset != c.keptEnd {
			c.gapFree = false
		}
		c.pos += int64(h.Size())
		c.keptEnd = h.NextOffset()
	}
	return c, nil
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
