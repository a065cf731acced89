package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// segment is one .log file and its indexes. All fields are guarded by Log.mu;
// file is safe for concurrent ReadAt below sizeBytes.
type segment struct {
	fs         vfs.FS
	dir        string
	baseOffset base.Offset
	// nextOffset is one past the segment's offset range [baseOffset,
	// nextOffset): the active segment's next offset to assign (End()), a
	// sealed segment's successor's base offset.
	nextOffset base.Offset
	// dataEnd is one past the last offset of the last batch (baseOffset if
	// there is none), at most nextOffset. It is short of nextOffset in a
	// sealed segment that compaction rewrote or that a roll across a gap
	// sealed, and in the active segment after TruncateTo(o) with o in a
	// gap (until the next append).
	dataEnd base.Offset
	// gapFree: the batches are known to run contiguously from baseOffset to
	// dataEnd. False once a batch starts past the end of the one before
	// (or past the base offset), for a compacted copy with gaps, and for a
	// segment loaded from its index files (unknown). Only a hint for
	// TruncateTo and ReadRegion, which then walk instead of trusting the
	// index to say where a kept batch ends.
	gapFree   bool
	sizeBytes int64
	file      vfs.File // .log, O_RDWR
	// cuts counts the truncations of this segment's file, so that a
	// Replacement begun before one knows it is stale.
	cuts int

	offsetIndex offsetIndex
	timeIndex   timeIndex

	maxTs         int64       // largest batch max timestamp, ms; valid when hasMaxTs
	maxTsOffset   base.Offset // base offset of the first batch that carries maxTs
	hasMaxTs      bool
	bytesSinceIdx int // bytes appended since the last index entry

	// rollStartAt is when the first batch was appended (or when the log was
	// opened, for a segment loaded from disk); segment.ms counts from it.
	rollStartAt    time.Time
	lastModifiedAt time.Time

	syncedBytes  int64 // prefix of the .log known to be fdatasync'ed
	indexDurable bool  // index files are complete and fsync'ed (sealed segments only)

	// preallocEnd is the end of the blocks reserved ahead of the data (see
	// prealloc.go); preallocOff is set when the file system refused.
	preallocEnd  int64
	preallocStep int64 // the next reservation's size; doubles up to a maximum
	preallocOff  bool

	// zeroedEnd: the file holds zeros in [sizeBytes, zeroedEnd), written by
	// the zero filler (zerofill.go); zeroFillOff is set after a failed write.
	zeroedEnd   int64
	zeroFillOff bool
	// sizeDirty: the file was cut back to its data and the cut is not yet
	// fdatasync'ed.
	sizeDirty bool
}

func (s *segment) path(suffix string) string { return segmentPath(s.dir, s.baseOffset, suffix) }

func (s *segment) empty() bool { return s.sizeBytes == 0 }

// rel converts an offset of a batch of the segment to the index's
// relative form. Every batch's last offset is within MaxUint32 of the
// base (shouldRoll, and recovery's and Replacement's checks); an offset in
// a sealed segment's range may be past that reach when its successor
// starts across a large gap: index searches take relAtMost.
func (s *segment) rel(o base.Offset) uint32 { return uint32(o - s.baseOffset) }

// relAtMost is o's relative offset for an index search ("the last entry
// at or below o"): o's, or, for an o past the index's reach, the largest,
// which no entry is above. o is at or after the base offset.
func (s *segment) relAtMost(o base.Offset) uint32 {
	return uint32(min(int64(o-s.baseOffset), math.MaxUint32))
}

// dropIndexEntriesFrom drops the index entries of the batches at or after
// o (the segment is cut before the first batch at or after o). Past the
// index's reach there are none.
func (s *segment) dropIndexEntriesFrom(o base.Offset) {
	if int64(o-s.baseOffset) > math.MaxUint32 {
		return
	}
	s.offsetIndex.truncateAt(s.rel(o))
	s.timeIndex.truncateAt(s.rel(o))
}

// newSegmentState returns a segment with no batches; the caller opens the file.
func newSegmentState(dir string, b base.Offset, o Options) *segment {
	return &segment{
		fs:          o.FS,
		dir:         dir,
		baseOffset:  b,
		nextOffset:  b,
		dataEnd:     b,
		gapFree:     true,
		offsetIndex: offsetIndex{maxEntries: o.SegmentIndexBytes / offsetEntrySize},
		timeIndex:   timeIndex{maxEntries: o.SegmentIndexBytes / timeEntrySize},
	}
}

// createSegment makes the files of a new, empty segment at b.
func createSegment(dir string, b base.Offset, o Options) (*segment, error) {
	s := newSegmentState(dir, b, o)
	f, err := s.fs.OpenFile(s.path(logSuffix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log: create segment: %w", err)
	}
	s.file = f
	for _, suffix := range segmentSuffixes[1:] {
		if err := writeIndexFile(s.fs, s.path(suffix), nil, 0); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	s.rollStartAt = o.Clock.Now()
	s.lastModifiedAt = s.rollStartAt
	return s, nil
}

// shouldRoll reports whether h must go into a new segment rather than s:
// s is full or old, or h's last offset is past the reach of s's index
// (Kafka's canConvertToRelativeOffset), which only a batch after a large
// gap can be (AppendReplicated), and which rolls even an empty segment.
// The new segment starts where h fits (rollAt).
func (s *segment) shouldRoll(h *record.Header, o Options, now time.Time) bool {
	if int64(h.LastOffset()-s.baseOffset) > math.MaxUint32 {
		return true
	}
	if s.empty() {
		return false
	}
	return s.sizeBytes+int64(h.Size()) > o.SegmentBytes ||
		(o.SegmentMaxAge > 0 && now.Sub(s.rollStartAt) > o.SegmentMaxAge) ||
		s.offsetIndex.full() || s.timeIndex.full()
}

// noteBatch records that the batch h was written at position pos. It does not
// allocate except when an index slice grows.
func (s *segment) noteBatch(h *record.Header, pos int64, intervalBytes int, now time.Time) {
	if s.empty() {
		s.rollStartAt = now
	}
	if !s.hasMaxTs || h.MaxTimestamp > s.maxTs {
		s.maxTs, s.maxTsOffset, s.hasMaxTs = h.MaxTimestamp, h.BaseOffset, true
	}
	if s.bytesSinceIdx > intervalBytes {
		s.offsetIndex.entries = append(s.offsetIndex.entries, offsetEntry{rel: s.rel(h.BaseOffset), pos: uint32(pos)})
		s.timeIndex.maybeAppend(s.maxTs, s.rel(s.maxTsOffset))
		s.bytesSinceIdx = 0
	}
	if h.BaseOffset != s.dataEnd {
		s.gapFree = false
	}
	size := h.Size()
	s.bytesSinceIdx += size
	s.sizeBytes = pos + int64(size)
	s.nextOffset, s.dataEnd = h.NextOffset(), h.NextOffset()
	s.lastModifiedAt = now
}

// resetState forgets every batch, before a rebuild by scanning.
func (s *segment) resetState() {
	s.nextOffset, s.dataEnd, s.sizeBytes = s.baseOffset, s.baseOffset, 0
	s.gapFree = true
	s.offsetIndex.entries, s.offsetIndex.flushed = s.offsetIndex.entries[:0], 0
	s.timeIndex.entries, s.timeIndex.flushed = s.timeIndex.entries[:0], 0
	s.maxTs, s.maxTsOffset, s.hasMaxTs = 0, 0, false
	s.bytesSinceIdx = 0
}

// readHeaderAt reads the batch header at pos into scratch (len >= HeaderSize)
// and checks that the batch fits below limit.
func readHeaderAt(f io.ReaderAt, pos, limit int64, scratch []byte) (record.Header, error) {
	if limit-pos < record.HeaderSize {
		return record.Header{}, fmt.Errorf("%w: %d bytes left at position %d, short of a header", ErrCorrupt, limit-pos, pos)
	}
	if _, err := f.ReadAt(scratch[:record.HeaderSize], pos); err != nil {
		return record.Header{}, fmt.Errorf("log: read header at %d: %w", pos, err)
	}
	h, err := record.ParseHeader(scratch)
	if err != nil {
		return record.Header{}, err
	}
	if err := checkFraming(&h, limit-pos); err != nil {
		return record.Header{}, fmt.Errorf("%w at position %d", err, pos)
	}
	return h, nil
}

// checkFraming checks what can be checked of a batch from its header alone,
// given that avail bytes remain from its start.
func checkFraming(h *record.Header, avail int64) error {
	switch {
	case h.Length < record.HeaderSize-record.LogOverhead:
		return fmt.Errorf("%w: batch length %d below header size", ErrCorrupt, h.Length)
	case int64(h.Size()) > avail:
		return fmt.Errorf("%w: batch of %d bytes but %d left", ErrCorrupt, h.Size(), avail)
	case h.Magic != 2:
		return fmt.Errorf("%w: magic %d", ErrCorrupt, h.Magic)
	case h.LastOffsetDelta < 0:
		return fmt.Errorf("%w: negative last offset delta %d", ErrCorrupt, h.LastOffsetDelta)
	}
	return nil
}

// flushIndexes writes the index entries not yet in the files, without fsync.
func (s *segment) flushIndexes() error {
	stale, err := indexFileStale(s.fs, s.path(indexSuffix), s.offsetIndex.flushed*offsetEntrySize)
	if err != nil {
		return err
	}
	if s.offsetIndex.flushed < len(s.offsetIndex.entries) || stale {
		if err := writeIndexFile(s.fs, s.path(indexSuffix), s.offsetIndex.encode(s.offsetIndex.flushed), s.offsetIndex.flushed*offsetEntrySize); err != nil {
			return err
		}
		s.offsetIndex.flushed = len(s.offsetIndex.entries)
	}
	if stale, err = indexFileStale(s.fs, s.path(timeIndexSuffix), s.timeIndex.flushed*timeEntrySize); err != nil {
		return err
	}
	if s.timeIndex.flushed < len(s.timeIndex.entries) || stale {
		if err := writeIndexFile(s.fs, s.path(timeIndexSuffix), s.timeIndex.encode(s.timeIndex.flushed), s.timeIndex.flushed*timeEntrySize); err != nil {
			return err
		}
		s.timeIndex.flushed = len(s.timeIndex.entries)
	}
	return nil
}

// writeIndexFile cuts the file at keepBytes, then appends tail there.
func writeIndexFile(fsys vfs.FS, path string, tail []byte, keepBytes int) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("log: open index: %w", err)
	}
	err = f.Truncate(int64(keepBytes))
	if err == nil && len(tail) > 0 {
		_, err = f.WriteAt(tail, int64(keepBytes))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("log: write index %s: %w", path, err)
	}
	return nil
}

// indexFileStale reports whether the index file at path must be rewritten
// although it holds its first n bytes: it holds more, or it is missing (a
// crash took it; an index with no entries is still an empty file).
func indexFileStale(fsys vfs.FS, path string, n int) (bool, error) {
	fi, err := fsys.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("log: stat index: %w", err)
	}
	return fi.Size() > int64(n), nil
}

// syncIndexFiles fsyncs both index files of s.
func syncIndexFiles(s *segment) error {
	for _, suffix := range segmentSuffixes[1:] {
		if err := syncPath(s.fs, s.path(suffix)); err != nil {
			return err
		}
	}
	return nil
}

// removeSegmentFiles deletes segs crash-safely: rename every file to
// .deleted, fsync the directory, close, unlink. A crash leaves only .deleted
// files, which Open removes. The renames go in the order of segs. Should a
// crash persist some of them without the rest, a journaling file system
// persists them in that order, so callers removing the tail of the log pass
// it newest first (reversed): a hole in the middle would look like a gap
// between segments (which recovery keeps below the recovery point).
func removeSegmentFiles(fsys vfs.FS, segs []*segment, dir string) error {
	if len(segs) == 0 {
		return nil
	}
	for _, s := range segs {
		for _, suffix := range segmentSuffixes {
			p := s.path(suffix)
			if err := fsys.Rename(p, p+deletedSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("log: delete segment: %w", err)
			}
		}
	}
	if err := syncDir(fsys, dir); err != nil {
		return err
	}
	for _, s := range segs {
		if s.file != nil {
			_ = s.file.Close() // read-only use from here on; nothing to lose
		}
		for _, suffix := range segmentSuffixes {
			if err := fsys.Remove(s.path(suffix) + deletedSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("log: delete segment: %w", err)
			}
		}
	}
	return nil
}

// reversed returns segs newest first, for removing the tail of the log.
func reversed(segs []*segment) []*segment {
	out := slices.Clone(segs)
	slices.Reverse(out)
	return out
}
