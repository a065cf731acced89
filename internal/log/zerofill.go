package log

import "bytes"

// Zero-filling the active segment ahead of its write position
// (Options.ZeroFill). An fdatasync after an append that grew the file must
// also write the inode (its size changed) and, for blocks reserved by
// fallocate, the extent tree: on ext4 without a journal these are separate,
// serialised I/Os. Into blocks already written and inside the file's size,
// fdatasync writes the data alone (4 KiB write + fdatasync, p50: 176–183 µs
// against 265–330 µs appending; bench/RESULTS.md).
//
// The zeros double the bytes written, so a log appending faster than
// zeroFillMaxBytesPerSec stops filling (append_rate.go): there the syncs
// carry many bytes each and the writes cost more than the syncs save.
//
// The price is a .log longer than its data while the segment is active:
// [sizeBytes, zeroedEnd) holds zeros. What keeps that safe:
//   - zeros are written only at or past sizeBytes and under mu, which every
//     append holds while it writes, so they never land on data;
//   - roll and Close cut the file back to its data (releasePrealloc), and the
//     cut is fdatasync'ed (sizeDirty) before the recovery point or the
//     clean-shutdown marker can pass the segment;
//   - recovery takes an all-zero tail for the end of the data, not for
//     damage (recoverSegment), so a cut lost in a crash costs a scan, never
//     the segments after it.
const (
	zeroFillAheadBytes    = 8 << 20   // zeroed past the write position, at most
	zeroFillMinAheadBytes = 128 << 10 // ... and at least
	zeroFillChunkBytes    = 512 << 10 // written per hold of mu, and synced
)

// zeroRunway is how far past its data s is kept zero-filled: as far as it
// already holds data, between the minimum and the maximum, and never past
// segmentBytes. A partition that gets a record now and then costs little;
// one written fast gets the whole run-way once it has shown the traffic.
func (s *segment) zeroRunway(segmentBytes int64) int64 {
	ahead := min(zeroFillAheadBytes, max(zeroFillMinAheadBytes, s.sizeBytes))
	return max(0, min(s.sizeBytes+ahead, segmentBytes)-s.sizeBytes)
}

// zeroFillPaysLocked reports whether the log appends slowly enough for
// zeros ahead of its writes to pay (zeroFillMaxBytesPerSec). Faster, its
// appends run past the zeros into preallocated blocks, as without
// ZeroFill.
func (l *Log) zeroFillPaysLocked() bool {
	return l.mu.rate.atMost(zeroFillMaxBytesPerSec)
}

// zeroChunk is never written: its pages stay the kernel's shared zero page.
var zeroChunk [zeroFillChunkBytes]byte

// wantsZeroFill reports whether s, the active segment, has less than half
// the zeroed run-way left.
func (s *segment) wantsZeroFill(segmentBytes int64) bool {
	if s.zeroFillOff {
		return false
	}
	runway := s.zeroRunway(segmentBytes)
	return s.sizeBytes+runway-max(s.zeroedEnd, s.sizeBytes) > runway/2
}

// kickZeroFillLocked asks the filler goroutine to run when the active
// segment wants zeros; it never blocks.
func (l *Log) kickZeroFillLocked() {
	if l.zeroKick == nil || !l.zeroFillPaysLocked() || !l.activeLocked().wantsZeroFill(l.mu.opts.SegmentBytes) {
		return
	}
	select {
	case l.zeroKick <- struct{}{}:
	default:
	}
}

// zeroFiller runs fillZeros on every kick until Close closes the channel.
func (l *Log) zeroFiller(kick <-chan struct{}) {
	for range kick {
		if err := l.fillZeros(); err != nil {
			return // the log has failed; every later call reports it
		}
	}
}

// fillZeros writes zeros past the active segment's data up to its run-way
// (zeroRunway), one chunk per hold of mu, each fdatasync'ed at once so that
// later appends into it do not change the file's size. Syncing chunk by
// chunk keeps the dirty zeros that a producer's sync round may have to
// write along with its data to one chunk. A failed write turns zero-filling
// off for the segment (only speed is lost); a failed fdatasync fails the
// log, because it may have consumed an error that a data sync would
// otherwise have reported.
func (l *Log) fillZeros() error {
	l.lifecycle.RLock()
	defer l.lifecycle.RUnlock()
	var s *segment
	for {
		l.mu.Lock()
		if err := l.usableLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
		a := l.activeLocked()
		if s != nil && a != s {
			l.mu.Unlock() // rolled: the sealed segment was cut back to its data
			return nil
		}
		s = a
		from := max(s.zeroedEnd, s.sizeBytes)
		to := min(s.sizeBytes+s.zeroRunway(l.mu.opts.SegmentBytes), from+zeroFillChunkBytes)
		if s.zeroFillOff || from >= to || !l.zeroFillPaysLocked() {
			l.mu.Unlock()
			return nil
		}
		n, err := s.file.WriteAt(zeroChunk[:to-from], from)
		if n > 0 {
			s.zeroedEnd = from + int64(n)
		}
		if err != nil {
			s.zeroFillOff = true
		}
		l.mu.Unlock()
		if n == 0 {
			continue
		}
		if err := fdatasync(s); err != nil {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.failLocked(err)
		}
	}
}

// zeroTail reports whether the file holds only zero bytes from pos to
// its end.
func (r *batchReader) zeroTail(pos int64) (bool, error) {
	for pos < r.size {
		b, err := r.at(pos, int(min(r.size-pos, scanWindowBytes)))
		if err != nil {
			return false, err
		}
		if !allZero(b) {
			return false, nil
		}
		pos += int64(len(b))
	}
	return true, nil
}

func allZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeroChunk))
		if !bytes.Equal(b[:n], zeroChunk[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}
