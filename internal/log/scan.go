package log

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// scanWindowBytes is how much of a .log a scan (recovery, a max timestamp
// from inside a segment) reads per pread.
const scanWindowBytes = 1 << 20

// batchReader serves byte ranges of a file from a sliding window, so a
// recovery scan costs one pread per window rather than two per batch.
type batchReader struct {
	f      vfs.File
	size   int64
	window []byte
	winPos int64
}

// ReadAt copies len(p) bytes at off out of the window, for readers of
// headers (readHeaderAt). The caller has checked off+len(p) <= size.
func (r *batchReader) ReadAt(p []byte, off int64) (int, error) {
	b, err := r.at(off, len(p))
	if err != nil {
		return 0, err
	}
	return copy(p, b), nil
}

// at returns the n bytes at pos. The caller has checked pos+n <= size.
func (r *batchReader) at(pos int64, n int) ([]byte, error) {
	if pos >= r.winPos && pos+int64(n) <= r.winPos+int64(len(r.window)) {
		off := pos - r.winPos
		return r.window[off : off+int64(n)], nil
	}
	want := int(min(int64(max(n, scanWindowBytes)), r.size-pos))
	if cap(r.window) < want {
		r.window = make([]byte, want)
	}
	r.window = r.window[:want]
	if _, err := r.f.ReadAt(r.window, pos); err != nil {
		r.window = r.window[:0]
		return nil, fmt.Errorf("log: scan read at %d: %w", pos, err)
	}
	r.winPos = pos
	return r.window[:n], nil
}

// segmentBounds is what recovery knows of a segment from its successor.
type segmentBounds struct {
	// limit is the successor's base offset: no batch may end past it.
	// hasLimit is false for the last segment.
	limit    base.Offset
	hasLimit bool
}

// accepts reports whether h may follow a batch ending at expected in s:
// it starts at or after expected (a gap is allowed: compaction and
// AppendReplicated leave them), its last offset is within the reach of
// s's index, and it ends at or below the successor's base.
func (b segmentBounds) accepts(s *segment, h *record.Header, expected base.Offset) bool {
	switch {
	case h.BaseOffset < expected, int64(h.LastOffset()-s.baseOffset) > math.MaxUint32:
		return false
	case b.hasLimit && h.NextOffset() > b.limit:
		return false
	}
	return true
}

// recoverSegment rebuilds s from its .log: it validates every batch (framing,
// magic, CRC, offsets strictly ascending from the base offset, gaps allowed,
// inside b's limit), truncates the file at the first invalid one, and
// rewrites both index files. It reports whether it cut damage off, in which
// case every later segment must go; a cut of zeros alone (zerofill.go) is
// not damage.
func recoverSegment(s *segment, o Options, now time.Time, b segmentBounds) (truncated bool, err error) {
	fi, err := s.file.Stat()
	if err != nil {
		return false, fmt.Errorf("log: recover: %w", err)
	}
	size := fi.Size()
	s.resetState()
	r := batchReader{f: s.file, size: size}
	pos := int64(0)
	for pos < size {
		if size-pos < record.HeaderSize {
			break
		}
		hb, err := r.at(pos, record.HeaderSize)
		if err != nil {
			return false, err
		}
		h, err := record.ParseHeader(hb)
		if err != nil || checkFraming(&h, size-pos) != nil || !b.accepts(s, &h, s.dataEnd) {
			break
		}
		batch, err := r.at(pos, h.Size())
		if err != nil {
			return false, err
		}
		if !batchCRCValid(batch) {
			break
		}
		s.noteBatch(&h, pos, o.IndexIntervalBytes, now)
		pos = s.sizeBytes
	}
	if pos < size {
		// Zeros to the end are what zero-filling left past the data (a cut
		// at roll lost in a crash): the data ends here, and the segments
		// after this one stay if they continue from it.
		zeros, err := r.zeroTail(pos)
		if err != nil {
			return false, err
		}
		if err := s.file.Truncate(pos); err != nil {
			return false, fmt.Errorf("log: recover truncate: %w", err)
		}
		if err := fdatasync(s); err != nil {
			return false, err
		}
		truncated = !zeros
	}
	s.lastModifiedAt = fi.ModTime()
	return truncated, s.flushIndexes()
}

// errRebuild means a trusted segment's index files cannot be used as they are.
var errRebuild = errors.New("log: index needs rebuild")

// loadTrusted loads s from its index files, trusting the .log (it is below the
// recovery point or the log was shut down cleanly). It still checks the index
// files, and reads only the batch headers after the last index entry to learn
// the data end and max timestamp. Any segment may have gaps, so whether s
// has any stays unknown (gapFree false). errRebuild asks for recoverSegment.
func loadTrusted(s *segment) error {
	fi, err := s.file.Stat()
	if err != nil {
		return fmt.Errorf("log: load: %w", err)
	}
	size := fi.Size()
	s.resetState()
	s.lastModifiedAt = fi.ModTime()
	ob, err := readIndex(s.fs, s.path(indexSuffix))
	if err != nil {
		return err
	}
	tb, err := readIndex(s.fs, s.path(timeIndexSuffix))
	if err != nil {
		return err
	}
	oes, err := decodeOffsetIndex(ob, size)
	if err != nil {
		return errRebuild
	}
	tes, err := decodeTimeIndex(tb)
	if err != nil {
		return errRebuild
	}
	s.offsetIndex.entries, s.offsetIndex.flushed = oes, len(oes)
	s.timeIndex.entries, s.timeIndex.flushed = tes, len(tes)

	if err := recomputeTail(s, size); err != nil {
		return errRebuild
	}
	if e, ok := s.timeIndex.last(); ok && s.baseOffset+base.Offset(e.rel) >= s.dataEnd {
		return errRebuild
	}
	// Only a full scan could tell whether there are gaps.
	s.gapFree = false
	return nil
}

// readIndex reads a whole index file; a missing one asks for a rebuild.
func readIndex(fsys vfs.FS, path string) ([]byte, error) {
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errRebuild
	}
	if err != nil {
		return nil, fmt.Errorf("log: read index: %w", err)
	}
	return b, nil
}

// recomputeTail derives the data end, max timestamp and bytes since the last
// index entry for a segment whose .log is size bytes and whose index entries
// are set: it reads the batch headers after the last offset index entry.
// Offsets must ascend, gaps allowed. It sets nextOffset to the data end; a
// sealed segment's caller then sets it to the successor's base, a
// truncation's to where it truncated. Used on load and after a cut; the
// indexes make it read at most about one index interval.
func recomputeTail(s *segment, size int64) error {
	s.hasMaxTs = false
	if e, ok := s.timeIndex.last(); ok {
		s.maxTs, s.maxTsOffset, s.hasMaxTs = e.ts, s.baseOffset+base.Offset(e.rel), true
	}
	pos, next, exact := int64(0), s.baseOffset, false
	if e, ok := s.offsetIndex.last(); ok {
		// The entry names the base offset of the batch at its position.
		pos, next, exact = int64(e.pos), s.baseOffset+base.Offset(e.rel), true
	}
	s.bytesSinceIdx = int(size - pos)
	var scratch [record.HeaderSize]byte
	for pos < size {
		h, err := readHeaderAt(s.file, pos, size, scratch[:])
		if err != nil {
			return err
		}
		if h.BaseOffset < next || (exact && h.BaseOffset != next) || int64(h.LastOffset()-s.baseOffset) > math.MaxUint32 {
			return fmt.Errorf("%w: batch at position %d has base offset %d, want %d", ErrCorrupt, pos, h.BaseOffset, next)
		}
		if !s.hasMaxTs || h.MaxTimestamp > s.maxTs {
			s.maxTs, s.maxTsOffset, s.hasMaxTs = h.MaxTimestamp, h.BaseOffset, true
		}
		pos += int64(h.Size())
		next, exact = h.NextOffset(), false
	}
	s.sizeBytes, s.dataEnd, s.nextOffset = size, next, next
	return nil
}
