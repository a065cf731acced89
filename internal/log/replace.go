package log

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// Replacing consecutive sealed segments with one compacted copy, as
// Kafka's LocalLog.replaceSegments does. The cleaner writes the copy
// through a Replacement while the log goes on taking appends, reads and
// syncs; Commit swaps it in:
//
//  1. fdatasync <B>.log.cleaned; write <B>.index.swap and <B>.timeindex.swap
//     and fsync them. Nothing visible has changed yet.
//  2. Bring the persisted recovery point up to the end of the replaced
//     range (a sync round, when it is short): recovery keeps a segment
//     whose data ends short of its successor's base with that successor
//     only if the recovery point covers that base (loadSegments), and the
//     copy's data may end anywhere in its range.
//  3. Take lifecycle exclusively, so that no truncation, deletion, close or
//     read runs, and check that the replaced segments are unchanged; if not,
//     remove the copy and return ErrReplacementStale.
//  4. Rename <B>.log.cleaned to <B>.log.swap and fsync the directory. This
//     is the commit point: from here on Open completes the swap
//     (finishSwaps), and a failure makes the log fail-stop.
//  5. Rename each replaced segment's files to .deleted; fsync the directory.
//  6. Rename the index swaps and <B>.log.swap into place; fsync the
//     directory.
//  7. Put the copy in the segment list in place of the old segments, close
//     their files (descriptors duplicated by ReadRegion or SealedSegment stay
//     readable) and unlink the .deleted files.
//
// The rename to .swap comes after the check, under lifecycle, not before
// it: a .swap made durable while a truncation or retention removes the
// segments it covers would, after a crash, bring the removed offsets back.
//
// mu is held only to check and to swap the list, not across the file
// operations: the replaced segments can change only under lifecycle, and
// appends, which need only mu, touch only the active segment.

// Replacement is a compacted copy of consecutive sealed segments being
// written, to replace them as one segment. It is used by one goroutine; a
// log has at most one at a time (BeginReplacement returns
// ErrReplacementInProgress while one is neither committed nor aborted).
type Replacement struct {
	l    *Log
	olds []*segment // the replaced segments, as at BeginReplacement
	cuts []int      // their cut counts then
	// next is the last replaced segment's next offset: the copy covers
	// [olds[0].baseOffset, next).
	next base.Offset
	// seg is the copy; its file is <base>.log.cleaned until the swap.
	seg                *segment
	indexIntervalBytes int // index.interval.bytes at BeginReplacement
	state              replacementState
	err                error // why the replacement is no longer writing
}

// replacementState is where a Replacement is in its life.
type replacementState int

const (
	replWriting   replacementState = iota + 1 // Append and Commit allowed
	replBroken                                // a write failed: only Abort (or a failing Commit) remains
	replCommitted                             // swapped in
	replDropped                               // aborted, stale, or failed before the commit point: files removed
	replFailed                                // failed after the commit point: the log failed, files left for Open
)

func validReplacementTransition(from, to replacementState) bool {
	switch from {
	case replWriting:
		return to == replBroken || to == replCommitted || to == replDropped || to == replFailed
	case replBroken:
		return to == replDropped
	}
	return false
}

func (r *Replacement) to(s replacementState) {
	if !validReplacementTransition(r.state, s) {
		panic(fmt.Sprintf("log: replacement state %d -> %d", r.state, s))
	}
	r.state = s
}

// errAborted is what a Replacement answers after Abort.
var errAborted = errors.New("log: replacement aborted")

// BeginReplacement starts writing a compacted copy of the consecutive
// sealed segments whose base offsets are bases (each the successor of the
// one before). The copy is written to "<bases[0]>.log.cleaned" and replaces
// all of them as one segment with base bases[0] and their combined offset
// range, whose batches must lie within MaxUint32 offsets of bases[0] (the
// relative offsets of the index; the range may run further, across a gap
// that a roll left). ErrNotSealed if a base starts no sealed segment (the
// active segment included) or the segments are not consecutive;
// ErrReplacementInProgress if another replacement is under way.
func (l *Log) BeginReplacement(bases []base.Offset) (*Replacement, error) {
	if len(bases) == 0 {
		return nil, fmt.Errorf("%w: no segment to replace", ErrNotSealed)
	}
	l.mu.Lock()
	r, err := l.beginReplacementLocked(bases)
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	f, err := l.fs.OpenFile(r.seg.path(logSuffix)+cleanedSuffix, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		l.endReplacement()
		return nil, fmt.Errorf("log: begin replacement: %w", err)
	}
	r.seg.file = f
	return r, nil
}

func (l *Log) beginReplacementLocked(bases []base.Offset) (*Replacement, error) {
	if err := l.usableLocked(); err != nil {
		return nil, err
	}
	if l.mu.replacing {
		return nil, ErrReplacementInProgress
	}
	segs := l.mu.segs
	j := sort.Search(len(segs), func(i int) bool { return segs[i].baseOffset >= bases[0] })
	for k, b := range bases {
		switch i := j + k; {
		case (i >= len(segs) || segs[i].baseOffset != b) && k == 0:
			return nil, fmt.Errorf("%w: no segment starts at %d", ErrNotSealed, b)
		case i >= len(segs) || segs[i].baseOffset != b:
			return nil, fmt.Errorf("%w: %d is not the base of the segment after the one at %d", ErrNotSealed, b, bases[k-1])
		case i == len(segs)-1:
			return nil, fmt.Errorf("%w: %d is the active segment", ErrNotSealed, b)
		}
	}
	olds := slices.Clone(segs[j : j+len(bases)])
	next := olds[len(olds)-1].nextOffset
	if dataEnd := olds[len(olds)-1].dataEnd; int64(dataEnd-1-bases[0]) > math.MaxUint32 {
		return nil, fmt.Errorf("log: replacement of [%d, %d) holds batches up to %d, more offsets than an index holds", bases[0], next, dataEnd-1)
	}
	r := &Replacement{
		l:                  l,
		olds:               olds,
		next:               next,
		seg:                newSegmentState(l.dir, bases[0], l.mu.opts),
		indexIntervalBytes: l.mu.opts.IndexIntervalBytes,
		state:              replWriting,
	}
	for _, s := range olds {
		r.cuts = append(r.cuts, s.cuts)
		if s.lastModifiedAt.After(r.seg.lastModifiedAt) {
			r.seg.lastModifiedAt = s.lastModifiedAt // retention by age counts from the newest data
		}
	}
	l.mu.replacing = true
	return r, nil
}

func (l *Log) endReplacement() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.replacing = false
}

// Range is the offset range the copy replaces, [bases[0], the last
// replaced segment's next offset).
func (r *Replacement) Range() base.Range {
	return base.Range{Start: r.seg.baseOffset, End: r.next}
}

// Append adds whole v2 batches to the copy: offsets assigned, strictly
// ascending (each batch starting past the end of the one before), inside
// Range(). The batches are checked (framing, CRC, offsets) before any is
// written; an invalid one (ErrInvalidBatch, ErrNotContiguous,
// ErrOffsetOutOfRange) leaves the copy as it was. The sparse indexes are
// built as appends build them, with the log's index interval at
// BeginReplacement. A failed write breaks the replacement: Abort it.
func (r *Replacement) Append(batches []byte) error {
	if r.state != replWriting {
		return r.unusable()
	}
	if err := r.check(batches); err != nil {
		return err
	}
	s := r.seg
	pos := s.sizeBytes
	if _, err := s.file.WriteAt(batches, pos); err != nil {
		r.err = fmt.Errorf("log: replacement append: %w", err)
		r.to(replBroken)
		return r.err
	}
	lastModified := s.lastModifiedAt
	now := r.l.clock.Now()
	for off := 0; off < len(batches); {
		h, _ := record.ParseHeader(batches[off:]) // checked above
		s.noteBatch(&h, pos+int64(off), r.indexIntervalBytes, now)
		off += h.Size()
	}
	s.lastModifiedAt = lastModified // the copy keeps the age of its data
	return nil
}

// check validates batches for Append.
func (r *Replacement) check(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: no batches", ErrInvalidBatch)
	}
	if r.seg.sizeBytes+int64(len(b)) > math.MaxInt32 {
		// Positions are uint32 in the offset index (see Options.Validate).
		return fmt.Errorf("%w: the copy would pass %d bytes", ErrInvalidBatch, math.MaxInt32)
	}
	next := r.seg.dataEnd
	for off := 0; off < len(b); {
		h, err := frameAt(b, off)
		if err != nil {
			return err
		}
		// Unlike Append's, these bytes were rewritten by the cleaner and will
		// replace durable data: always check.
		if !batchCRCValid(b[off : off+h.Size()]) {
			return fmt.Errorf("%w: CRC mismatch in batch at offset %d", ErrInvalidBatch, h.BaseOffset)
		}
		if h.BaseOffset < next {
			return fmt.Errorf("%w: batch base offset %d, want %d or more", ErrNotContiguous, h.BaseOffset, next)
		}
		if h.NextOffset() > r.next || int64(h.LastOffset()-r.seg.baseOffset) > math.MaxUint32 {
			return fmt.Errorf("%w: batch [%d, %d) ends past the replaced range %v or the index's reach", ErrOffsetOutOfRange, h.BaseOffset, h.NextOffset(), r.Range())
		}
		next = h.NextOffset()
		off += h.Size()
	}
	return nil
}

// unusable is the error of a call on a replacement that is not writing.
func (r *Replacement) unusable() error {
	if r.state == replCommitted {
		return errors.New("log: replacement already committed")
	}
	return r.err
}

// Commit makes the copy durable and swaps it in for the replaced segments
// (see the protocol above). ErrReplacementStale if they are no longer
// exactly those segments (retention or DeleteRecords deleted some,
// TruncateTo cut them, the log closed): the copy is then removed and the
// log is unchanged, as it is after any error before the commit point. An
// error after it fails the log (every later write returns it) and leaves
// the files for Open, which finishes the swap.
func (r *Replacement) Commit() error {
	if r.state == replBroken {
		return r.drop(r.err)
	}
	if r.state != replWriting {
		return r.unusable()
	}
	if err := r.makeDurable(); err != nil {
		return r.drop(err)
	}
	l := r.l
	if err := l.advanceRecoveryPoint(r.next); err != nil {
		if errors.Is(err, ErrClosed) {
			err = fmt.Errorf("%w: %w", ErrReplacementStale, err)
		}
		return r.drop(err)
	}
	l.lifecycle.Lock()
	defer l.lifecycle.Unlock()
	l.mu.Lock()
	err := r.checkLocked()
	l.mu.Unlock()
	if err != nil {
		return r.drop(err)
	}
	installed, err := r.swap()
	if err != nil {
		l.mu.Lock()
		l.failLocked(err)
		l.mu.replacing = false
		l.mu.Unlock()
		if !installed {
			_ = r.seg.file.Close() // the files stay for Open
		}
		r.err = err
		r.to(replFailed)
		return err
	}
	r.to(replCommitted)
	l.endReplacement()
	return nil
}

// makeDurable fdatasyncs the copy and writes its index files, durably,
// under their .swap names.
func (r *Replacement) makeDurable() error {
	s := r.seg
	if err := s.file.Datasync(); err != nil {
		return fmt.Errorf("log: fdatasync %s: %w", s.path(logSuffix)+cleanedSuffix, err)
	}
	s.syncedBytes = s.sizeBytes
	if err := writeIndexFile(s.fs, s.path(indexSuffix)+swapSuffix, s.offsetIndex.encode(0), 0); err != nil {
		return err
	}
	if err := writeIndexFile(s.fs, s.path(timeIndexSuffix)+swapSuffix, s.timeIndex.encode(0), 0); err != nil {
		return err
	}
	for _, suffix := range segmentSuffixes[1:] {
		if err := syncPath(s.fs, s.path(suffix)+swapSuffix); err != nil {
			return err
		}
	}
	s.offsetIndex.flushed, s.timeIndex.flushed = len(s.offsetIndex.entries), len(s.timeIndex.entries)
	s.indexDurable = true
	return nil
}

// advanceRecoveryPoint runs sync rounds until the persisted recovery point
// is at least x, which must be at most the active segment's base (a round
// persists that base).
func (l *Log) advanceRecoveryPoint(x base.Offset) error {
	for {
		l.mu.Lock()
		if err := l.usableLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
		if l.mu.persistedRP >= x {
			l.mu.Unlock()
			return nil
		}
		if l.activeLocked().baseOffset < x {
			l.mu.Unlock()
			return fmt.Errorf("%w: the log was truncated below %d", ErrReplacementStale, x)
		}
		ch := l.mu.syncing
		l.mu.Unlock()
		if ch != nil {
			<-ch
			continue
		}
		if err := l.leadSyncRound(); err != nil {
			return err
		}
	}
}

// checkLocked reports whether the replaced segments are still in the log,
// consecutive, sealed and uncut, and below the persisted recovery point.
func (r *Replacement) checkLocked() error {
	l := r.l
	if l.mu.closed {
		return fmt.Errorf("%w: %w", ErrReplacementStale, ErrClosed)
	}
	if l.mu.failed != nil {
		return l.mu.failed
	}
	segs := l.mu.segs
	j := slices.Index(segs, r.olds[0])
	if j < 0 || j+len(r.olds) >= len(segs) {
		return fmt.Errorf("%w: segments of %v were deleted", ErrReplacementStale, r.Range())
	}
	for k, s := range r.olds {
		if segs[j+k] != s || s.cuts != r.cuts[k] {
			return fmt.Errorf("%w: segments of %v were truncated", ErrReplacementStale, r.Range())
		}
	}
	if r.olds[len(r.olds)-1].nextOffset != r.next || l.mu.persistedRP < r.next {
		return fmt.Errorf("%w: segments of %v were truncated", ErrReplacementStale, r.Range())
	}
	return nil
}

// swap runs steps 4 to 7 of the protocol, with lifecycle held. installed
// reports whether the copy is in the segment list.
func (r *Replacement) swap() (installed bool, err error) {
	l, s := r.l, r.seg
	logPath := s.path(logSuffix)
	if err := l.fs.Rename(logPath+cleanedSuffix, logPath+swapSuffix); err != nil {
		return false, fmt.Errorf("log: replacement swap: %w", err)
	}
	if err := syncDir(l.fs, l.dir); err != nil {
		return false, err
	}
	for _, old := range r.olds {
		for _, suffix := range segmentSuffixes {
			p := old.path(suffix)
			if err := l.fs.Rename(p, p+deletedSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("log: replacement delete: %w", err)
			}
		}
	}
	if err := syncDir(l.fs, l.dir); err != nil {
		return false, err
	}
	for _, suffix := range segmentSuffixes[1:] {
		if err := l.fs.Rename(s.path(suffix)+swapSuffix, s.path(suffix)); err != nil {
			return false, fmt.Errorf("log: replacement swap: %w", err)
		}
	}
	if err := l.fs.Rename(logPath+swapSuffix, logPath); err != nil {
		return false, fmt.Errorf("log: replacement swap: %w", err)
	}
	if err := syncDir(l.fs, l.dir); err != nil {
		return false, err
	}

	s.nextOffset = r.next
	s.rollStartAt = l.clock.Now()
	l.mu.Lock()
	j := slices.Index(l.mu.segs, r.olds[0]) // only lifecycle holders remove segments
	segs := make([]*segment, 0, len(l.mu.segs)-len(r.olds)+1)
	segs = append(segs, l.mu.segs[:j]...)
	segs = append(segs, s)
	l.mu.segs = append(segs, l.mu.segs[j+len(r.olds):]...)
	l.mu.Unlock()

	for _, old := range r.olds {
		_ = old.file.Close() // read-only from here on; nothing to lose
	}
	for _, old := range r.olds {
		for _, suffix := range segmentSuffixes {
			if err := l.fs.Remove(old.path(suffix) + deletedSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return true, fmt.Errorf("log: replacement delete: %w", err)
			}
		}
	}
	return true, nil
}

// Abort drops a replacement that is not committed, and its files. It is a
// no-op after Commit, including after a Commit that failed past the commit
// point (Open then finishes the swap).
func (r *Replacement) Abort() {
	if r.state == replWriting || r.state == replBroken {
		_ = r.drop(errAborted)
	}
}

// drop removes the copy's files, ends the replacement and returns err.
// Removal need not be durable: Open removes .cleaned and .swap leftovers.
func (r *Replacement) drop(err error) error {
	s := r.seg
	_ = s.file.Close() // the copy is being thrown away
	_ = s.fs.Remove(s.path(logSuffix) + cleanedSuffix)
	for _, suffix := range segmentSuffixes[1:] {
		_ = s.fs.Remove(s.path(suffix) + swapSuffix)
	}
	r.err = err
	r.to(replDropped)
	r.l.endReplacement()
	return err
}
