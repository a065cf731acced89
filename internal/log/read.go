package log

import (
	"fmt"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// Read appends to buf whole batches starting with the first batch whose last
// offset is at or after from (the batch that contains from, so it may start
// before from, as in Kafka; where from falls in a gap, which compaction or
// AppendReplicated leaves, the next batch after it, possibly in a later
// segment), up to maxBytes in
// total, but always at least one whole batch if there is one (KIP-74). It
// reads from one segment only. from == End(), or a from with no batch at or
// after it, appends nothing; from outside [Start(), End()] is
// ErrOffsetOutOfRange. The file is read with pread, without holding mu; buf
// grows only if its capacity is short.
func (l *Log) Read(from base.Offset, maxBytes int, buf []byte) ([]byte, error) {
	l.lifecycle.RLock()
	defer l.lifecycle.RUnlock()
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return buf, ErrClosed
	}
	start, end := l.mu.segs[0].baseOffset, l.activeLocked().nextOffset
	if from < start || from > end {
		l.mu.Unlock()
		return buf, fmt.Errorf("%w: %d outside [%d, %d]", ErrOffsetOutOfRange, from, start, end)
	}
	if from == end {
		l.mu.Unlock()
		return buf, nil
	}
	i := l.segmentServingLocked(from)
	if i == len(l.mu.segs) {
		l.mu.Unlock()
		return buf, nil
	}
	s := l.mu.segs[i]
	pos := s.positionBefore(from)
	f, limit := s.file, s.sizeBytes // bytes below limit are whole batches and never rewritten while lifecycle is held
	slack := int64(min(l.mu.opts.IndexIntervalBytes, maxWalkSlackBytes)) + record.HeaderSize
	l.mu.Unlock()

	// One pread serves a read whose batch lies near the index entry before
	// from (the index is sparse: that batch starts up to about
	// index.interval.bytes past the entry), as a consumer at the tail's
	// does: the walk to the batch and the batches returned come from one
	// read. A walk that leaves the window goes on header by header; an
	// answer past the window (a large read) is read where it starts, not
	// moved within the buffer.
	n := len(buf)
	window := min(limit-pos, int64(min(maxBytes, maxTailWindowBytes))+slack)
	buf = slices.Grow(buf, int(window))
	chunk := buf[n : n+int(window)]
	if _, err := f.ReadAt(chunk, pos); err != nil {
		return buf[:n], fmt.Errorf("log: read at %d: %w", pos, err)
	}
	off, h, found, err := walkToBatch(chunk, pos, limit, from)
	if err != nil {
		return buf[:n], err
	}
	if found {
		want := min(int64(max(maxBytes, h.Size())), limit-pos-int64(off))
		if int64(off)+want <= window {
			m := copy(chunk, chunk[off:int64(off)+want])
			return buf[:n+wholeBatchesPrefix(chunk[:m])], nil
		}
	}
	pos += int64(off)

	scratch := buf[n : n+record.HeaderSize]
	for {
		if h, err = readHeaderAt(f, pos, limit, scratch); err != nil {
			return buf[:n], err
		}
		if h.NextOffset() > from {
			break
		}
		pos += int64(h.Size())
	}
	want := int64(max(maxBytes, h.Size()))
	want = min(want, limit-pos)
	buf = slices.Grow(buf[:n], int(want))
	chunk = buf[n : n+int(want)]
	if _, err := f.ReadAt(chunk, pos); err != nil {
		return buf[:n], fmt.Errorf("log: read at %d: %w", pos, err)
	}
	return buf[:n+wholeBatchesPrefix(chunk)], nil
}

// Read's first pread reaches at most maxTailWindowBytes of answer (what it
// moves within the buffer) past at most maxWalkSlackBytes of walk from the
// index entry, whatever maxBytes and index.interval.bytes are.
const (
	maxTailWindowBytes = 64 << 10
	maxWalkSlackBytes  = 64 << 10
)

// walkToBatch walks the whole headers in chunk, the file's bytes from pos,
// to the first batch whose last offset is at or after from. found reports
// whether it is in chunk, at off with header h; if not, off is where the
// walk stopped: the start of a batch at or past the end of chunk. Each
// header is checked as readHeaderAt checks it against limit.
func walkToBatch(chunk []byte, pos, limit int64, from base.Offset) (off int, h record.Header, found bool, err error) {
	for len(chunk)-off >= record.HeaderSize {
		if h, err = record.ParseHeader(chunk[off:]); err != nil {
			return off, h, false, err
		}
		if err = checkFraming(&h, limit-pos-int64(off)); err != nil {
			return off, h, false, fmt.Errorf("%w at position %d", err, pos+int64(off))
		}
		if h.NextOffset() > from {
			return off, h, true, nil
		}
		off += h.Size()
	}
	return off, record.Header{}, false, nil
}

// segmentServingLocked returns the index of the first segment holding a
// batch whose last offset is at or after o, for Start() <= o < End(), or
// len(segs) if there is none. That is o's segment unless o falls in a gap
// after its last batch (or o's segment is empty).
func (l *Log) segmentServingLocked(o base.Offset) int {
	segs := l.mu.segs
	i := l.segmentIndexLocked(o)
	for i < len(segs) && (segs[i].empty() || segs[i].dataEnd <= o) {
		i++
	}
	return i
}

// positionBefore is where a walk to the batch holding o (or the first after
// it) starts: a batch start at or before it, found through the offset index.
// For o below the base offset it is the start of the file.
func (s *segment) positionBefore(o base.Offset) int64 {
	if o <= s.baseOffset {
		return 0
	}
	return int64(s.offsetIndex.lookup(s.relAtMost(o)))
}

// wholeBatchesPrefix is the length of the longest prefix of b made of whole
// batches. b starts with a whole batch.
func wholeBatchesPrefix(b []byte) int {
	off := 0
	for {
		h, err := record.ParseHeader(b[off:])
		if err != nil || h.Length < 0 || h.Size() > len(b)-off {
			return off
		}
		off += h.Size()
	}
}

// OffsetForTimestamp finds the first record at or after offset from whose
// timestamp is at or after ts, and returns its offset and timestamp, as
// Kafka's ListOffsets by timestamp does (FileRecords.searchForTimestamp):
// the first batch from from whose max timestamp reaches ts is read and its
// records searched, and the next ones if none of its records at or after
// from qualifies. ok is false if no record qualifies or the log cannot be
// read.
func (l *Log) OffsetForTimestamp(ts int64, from base.Offset) (base.Offset, int64, bool) {
	l.lifecycle.RLock()
	defer l.lifecycle.RUnlock()
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return 0, 0, false
	}
	var scans []segmentScan
	for _, s := range l.mu.segs {
		if !s.hasMaxTs || s.maxTs < ts || s.dataEnd <= from {
			continue
		}
		// Batches before the time index entry at or below ts all end
		// below ts; those before from's batch all end below from.
		pos := int64(s.offsetIndex.lookup(s.timeIndex.lookup(ts)))
		if from > s.baseOffset {
			pos = max(pos, int64(s.offsetIndex.lookup(s.relAtMost(from))))
		}
		scans = append(scans, segmentScan{f: s.file, pos: pos, limit: s.sizeBytes})
	}
	l.mu.Unlock()
	var rr record.RecordReader
	for _, sc := range scans {
		found, ok, err := sc.firstAtOrAfter(ts, from, &rr)
		if err != nil || ok {
			return found.Offset, found.Timestamp, ok && err == nil
		}
	}
	return 0, 0, false
}

// firstAtOrAfter is OffsetForTimestamp within one segment's batches.
func (s segmentScan) firstAtOrAfter(ts int64, from base.Offset, rr *record.RecordReader) (record.Stamped, bool, error) {
	var scratch [record.HeaderSize]byte
	var batch []byte
	for pos := s.pos; pos < s.limit; {
		h, err := readHeaderAt(s.f, pos, s.limit, scratch[:])
		if err != nil {
			return record.Stamped{}, false, err
		}
		if h.MaxTimestamp >= ts && h.NextOffset() > from {
			batch = slices.Grow(batch[:0], h.Size())[:h.Size()]
			if _, err := s.f.ReadAt(batch, pos); err != nil {
				return record.Stamped{}, false, fmt.Errorf("log: read batch at %d: %w", pos, err)
			}
			found, ok, err := rr.FirstAtOrAfter(batch, from, ts)
			if err != nil || ok {
				return found, ok, err
			}
		}
		pos += int64(h.Size())
	}
	return record.Stamped{}, false, nil
}

// SegmentInfo describes one segment, for the retention planner.
type SegmentInfo struct {
	// [BaseOffset, NextOffset) is the segment's offset range; NextOffset is
	// the next segment's base offset for a sealed segment, End() for the
	// active one. The batches have strictly ascending offsets in that
	// range; there may be gaps between them and at either end (compaction
	// and AppendReplicated leave them), or no batch at all.
	BaseOffset base.Offset
	NextOffset base.Offset // exclusive
	SizeBytes  int64
	// MaxTimestamp is the largest batch max timestamp in ms, and LargestTimeAt
	// the base offset of the first batch carrying it; both valid only when
	// HasTimestamp (a segment with no batches has none).
	MaxTimestamp  int64
	LargestTimeAt base.Offset
	HasTimestamp  bool
	// LastModified is when the segment was last appended to (or the file's
	// mtime when loaded from disk), for retention of segments without timestamps.
	LastModified time.Time
	Active       bool
}

// Segments returns a snapshot of the segments, oldest first.
func (l *Log) Segments() []SegmentInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]SegmentInfo, len(l.mu.segs))
	for i := range l.mu.segs {
		out[i] = l.segmentInfoLocked(i)
	}
	return out
}
