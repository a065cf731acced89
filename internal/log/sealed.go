package log

import (
	"errors"
	"fmt"
	"os"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// ErrNotSealed: SealedSegment or BeginReplacement was asked for the active
// segment, which is still appended to, or for a base offset that starts no
// segment (for BeginReplacement: not the next one after the previous base).
var ErrNotSealed = errors.New("log: not a sealed segment")

// SealedSegment is one sealed segment open for reading, for an upload to
// the remote tier. File is a duplicate descriptor that the caller owns and
// must Close; it stays readable if retention deletes the segment meanwhile.
// File holds whole batches in [0, Info.SizeBytes) with offsets in
// [Info.BaseOffset, Info.NextOffset), strictly ascending: contiguous from
// the base offset, or with gaps, in a segment that compaction rewrote or
// that AppendReplicated wrote.
type SealedSegment struct {
	Info SegmentInfo
	File *os.File
}

// SealedSegment opens the sealed segment whose base offset is b. It refuses
// the active segment and an offset that starts no segment (ErrNotSealed). A
// log whose FS has no OS descriptors returns vfs.ErrNoDescriptor.
//
// A sealed segment changes only by TruncateTo below its end (a new leader
// truncating a diverged log); bytes below Info.SizeBytes read meanwhile may
// then come up short, which the reader sees as a short read, never as other
// data. A Replacement swaps in a new file and leaves this one whole.
func (l *Log) SealedSegment(b base.Offset) (SealedSegment, error) {
	// lifecycle keeps the file open while it is duplicated.
	l.lifecycle.RLock()
	defer l.lifecycle.RUnlock()
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return SealedSegment{}, ErrClosed
	}
	var info SegmentInfo
	var f vfs.File
	for i, s := range l.mu.segs[:len(l.mu.segs)-1] {
		if s.baseOffset == b {
			info, f = l.segmentInfoLocked(i), s.file
			break
		}
	}
	l.mu.Unlock()
	if f == nil {
		return SealedSegment{}, fmt.Errorf("%w: no sealed segment starts at %d", ErrNotSealed, b)
	}
	dup, err := vfs.DupOS(f)
	if err != nil {
		return SealedSegment{}, err
	}
	return SealedSegment{Info: info, File: dup}, nil
}

// segmentInfoLocked describes segment i as Segments does.
func (l *Log) segmentInfoLocked(i int) SegmentInfo {
	s := l.mu.segs[i]
	return SegmentInfo{
		BaseOffset:    s.baseOffset,
		NextOffset:    s.nextOffset,
		SizeBytes:     s.sizeBytes,
		MaxTimestamp:  s.maxTs,
		LargestTimeAt: s.maxTsOffset,
		HasTimestamp:  s.hasMaxTs,
		LastModified:  s.lastModifiedAt,
		Active:        i == len(l.mu.segs)-1,
	}
}
