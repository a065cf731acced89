package log

import "github.com/strata-broker/strata/internal/vfs"

// The active segment's blocks are reserved ahead of the write position.
// Appending into reserved blocks costs the kernel several times less than
// extending the file block by block (ext4: measured 2.9 GB/s vs 0.4–1.6
// GB/s for 16 KiB writes). Reservations start small and double up to the
// maximum, so a partition that gets a commit now and then (the 50 of
// __consumer_offsets) holds little, and a sealed or closed segment gives
// back what it did not use (releasePrealloc).
const (
	preallocFirstStepBytes = 1 << 20
	preallocMaxStepBytes   = 16 << 20
)

// ensurePrealloc reserves blocks so that a write ending at end lands in
// them. Failures only cost speed, so they turn preallocation off for the
// segment.
func (s *segment) ensurePrealloc(end, segmentBytes int64) {
	if s.preallocOff || end <= max(s.preallocEnd, s.zeroedEnd) {
		return
	}
	s.preallocEnd = max(s.preallocEnd, s.zeroedEnd) // zeroed blocks are allocated
	want := max(s.preallocStep, preallocFirstStepBytes)
	step := min(max(want, end-s.preallocEnd), max(segmentBytes-s.preallocEnd, end-s.preallocEnd))
	if err := vfs.Preallocate(s.file, s.preallocEnd, step); err != nil {
		s.preallocOff = true
		return
	}
	s.preallocEnd += step
	s.preallocStep = min(2*want, preallocMaxStepBytes)
}

// releasePrealloc gives back reserved blocks past the data: truncating to
// the current size frees them and changes no byte. A file that zero-filling
// made longer than its data shrinks, and that cut needs an fdatasync
// (sizeDirty) before anything may rely on the file's size.
func (s *segment) releasePrealloc() error {
	if s.preallocEnd <= s.sizeBytes && s.zeroedEnd <= s.sizeBytes {
		return nil
	}
	longer := s.zeroedEnd > s.sizeBytes
	s.preallocEnd, s.zeroedEnd = 0, 0
	if err := s.file.Truncate(s.sizeBytes); err != nil {
		return err
	}
	if longer {
		s.sizeDirty = true
	}
	return nil
}
