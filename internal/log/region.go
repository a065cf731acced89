package log

import (
	"fmt"
	"os"
	"sort"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// Region is the byte range [Pos, Pos+Size) of one segment file, holding
// whole batches from the one containing the offset asked for up to Next
// (exclusive). It lets a fetch send log bytes with sendfile instead of
// copying them through user space. File is a duplicate descriptor that the
// caller owns and must Close; it stays valid if the segment is deleted.
// Release, when set (regions of the remote tier's chunk cache), must run
// once the bytes are sent or dropped: Close does both.
type Region struct {
	File    *os.File
	Pos     int64
	Size    int64
	Next    base.Offset
	Release func()
}

// Close closes File and runs Release: the holder of a region calls it
// once, when the region is sent or dropped.
func (r Region) Close() {
	if r.File != nil {
		r.File.Close()
	}
	if r.Release != nil {
		r.Release()
	}
}

// ReadRegion is Read without the copy: it finds the same batches and
// returns where they are, leaving out every batch that starts at or after
// below (a reader's high watermark; the log's end or more for none). The
// region ends at a batch boundary found through the sparse offset index, so
// it may stop up to one index interval short of maxBytes; it always holds at
// least one whole batch when the first batch ending at or after from starts
// below min(below, End()). Next is where the next read goes on: one past
// the region's last batch, or, in a segment with gaps, possibly the base
// offset of the batch after it (no batch starts in between). An empty
// region has no File and Next == from. A log whose FS has no OS descriptors
// returns vfs.ErrNoDescriptor.
func (l *Log) ReadRegion(from, below base.Offset, maxBytes int) (Region, error) {
	l.lifecycle.RLock()
	defer l.lifecycle.RUnlock()
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return Region{}, ErrClosed
	}
	start, end := l.mu.segs[0].baseOffset, l.activeLocked().nextOffset
	if from < start || from > end {
		l.mu.Unlock()
		return Region{}, fmt.Errorf("%w: %d outside [%d, %d]", ErrOffsetOutOfRange, from, start, end)
	}
	if from == end || from >= below {
		l.mu.Unlock()
		return Region{Next: from}, nil
	}
	i := l.segmentServingLocked(from)
	if i == len(l.mu.segs) {
		l.mu.Unlock()
		return Region{Next: from}, nil
	}
	s := l.mu.segs[i]
	pos := s.positionBefore(from)
	// Bytes below limit are whole batches up to nextAtLimit, and are never
	// rewritten while lifecycle is held.
	f, limit, nextAtLimit := s.file, s.sizeBytes, s.dataEnd
	cutFrom := int64(-1) // where to look for the batch at below, if in s
	if below < nextAtLimit && below > s.baseOffset {
		target := below
		if !s.gapFree {
			// Start at a batch below below, so that the walk sees where
			// the last batch the region keeps ends.
			target--
		}
		cutFrom = int64(s.offsetIndex.lookup(s.rel(target)))
	}
	l.mu.Unlock()

	var scratch [record.HeaderSize]byte
	h, pos, err := batchHolding(f, pos, limit, from, scratch[:])
	if err != nil {
		return Region{}, err
	}
	if h.BaseOffset >= below { // from is in a gap that below cuts
		return Region{Next: from}, nil
	}
	if cutFrom >= 0 {
		// The first batch starting at or after below ends the region; it
		// starts past the batch holding from, which starts below it.
		cut, err := firstBatchFrom(f, max(cutFrom, pos), limit, below, scratch[:])
		if err != nil {
			return Region{}, err
		}
		if cut.pos < limit {
			limit, nextAtLimit = cut.pos, cut.next
		}
	}
	r := Region{Pos: pos, Size: limit - pos, Next: nextAtLimit}
	if r.Size > int64(maxBytes) {
		l.mu.Lock()
		r.Size, r.Next = s.boundaryBelow(pos, pos+int64(maxBytes))
		l.mu.Unlock()
		if r.Size == 0 { // KIP-74: at least the first batch
			r.Size, r.Next = int64(h.Size()), h.NextOffset()
		}
	}
	dup, err := vfs.DupOS(f)
	if err != nil {
		return Region{}, err
	}
	r.File = dup
	return r, nil
}

// batchHolding walks the batch headers of f from pos, a batch start, to the
// first batch whose last offset is at or after from (the batch holding from,
// or the next one if from is in a gap), and returns its header and position.
func batchHolding(f vfs.File, pos, limit int64, from base.Offset, scratch []byte) (record.Header, int64, error) {
	for {
		h, err := readHeaderAt(f, pos, limit, scratch)
		if err != nil {
			return h, pos, err
		}
		if h.NextOffset() > from {
			return h, pos, nil
		}
		pos += int64(h.Size())
	}
}

// batchStart is where a batch starts in a segment file, and where the
// batches before it end.
type batchStart struct {
	pos  int64
	next base.Offset
}

// firstBatchFrom walks the batch headers of f from pos, a batch start, to
// the first batch whose base offset is at least o; at limit it returns pos
// limit. next is the end of the last batch before it, or, if the walk read
// none, that batch's base offset: the same in a segment without gaps; in
// one with gaps the caller starts below o.
func firstBatchFrom(f vfs.File, pos, limit int64, o base.Offset, scratch []byte) (batchStart, error) {
	var next base.Offset
	read := false
	for pos < limit {
		h, err := readHeaderAt(f, pos, limit, scratch)
		if err != nil {
			return batchStart{}, err
		}
		if h.BaseOffset >= o {
			if !read {
				next = h.BaseOffset
			}
			return batchStart{pos: pos, next: next}, nil
		}
		next, read = h.NextOffset(), true
		pos += int64(h.Size())
	}
	return batchStart{pos: limit, next: next}, nil
}

// boundaryBelow finds, through the offset index, the last batch start in
// (pos, maxPos] and returns the size of [pos, that start) and the offset
// there. It returns (0, 0) when the index has no entry in that range.
func (s *segment) boundaryBelow(pos, maxPos int64) (int64, base.Offset) {
	es := s.offsetIndex.entries
	i := sort.Search(len(es), func(i int) bool { return int64(es[i].pos) > maxPos })
	if i == 0 || int64(es[i-1].pos) <= pos {
		return 0, 0
	}
	e := es[i-1]
	return int64(e.pos) - pos, s.baseOffset + base.Offset(e.rel)
}
