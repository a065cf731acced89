package log

import "github.com/strata-broker/strata/internal/vfs"

// preallocStepBytes is how far ahead of the write position the active
// segment's blocks are reserved. Appending into reserved blocks costs the
// kernel several times less than extending the file block by block (ext4:
// measured 2.9 GB/s vs 0.4–1.6 GB/s for 16 KiB writes), and a sealed or
// closed segment gives back what it did not use (releasePrealloc), so idle
// partitions hold at most one step each.
const preallocStepBytes = 16 << 20

// ensurePrealloc reserves blocks so that a write ending at end lands in
// them. Failures only cost speed, so they turn preallocation off for the
// segment.
func (s *segment) ensurePrealloc(end, segmentBytes int64) {
	if s.preallocOff || end <= s.preallocEnd {
		return
	}
	step := min(max(preallocStepBytes, end-s.preallocEnd), max(segmentBytes-s.preallocEnd, end-s.preallocEnd))
	if err := vfs.Preallocate(s.file, s.preallocEnd, step); err != nil {
		s.preallocOff = true
		return
	}
	s.preallocEnd += step
}

// releasePrealloc gives back reserved blocks past the data: truncating to
// the current size frees them and changes no byte.
func (s *segment) releasePrealloc() error {
	if s.preallocEnd <= s.sizeBytes {
		return nil
	}
	s.preallocEnd = 0
	return s.file.Truncate(s.sizeBytes)
}
