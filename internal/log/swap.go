package log

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// finishSwaps completes the replacements (replace.go) that a crash
// interrupted past their commit point, before Open looks at the segments.
// A <B>.log.swap holds the compacted copy of the segments whose base
// offsets are in [B, L], L being the last offset of its last batch (B alone
// if it has none): every segment file there is deleted (they were the
// replaced segments, or their .deleted renames did not persist), then the
// swap's index files and the swap itself are renamed into place. An index
// swap that did not persist leaves the index to be rebuilt by a scan.
// Replaced segments past L held only offsets that the copy dropped; those
// that survive keep their data and do not overlap the copy. Redoing this
// after a crash in the middle is safe: the .log.swap is renamed last. It
// reports whether there was anything to finish.
func finishSwaps(fsys vfs.FS, dir string) (bool, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("log: open: %w", err)
	}
	var swaps []base.Offset
	for _, e := range entries {
		if b, ok := parseSwapName(e.Name()); ok && !e.IsDir() {
			swaps = append(swaps, b)
		}
	}
	if len(swaps) == 0 {
		return false, nil
	}
	for _, b := range swaps {
		last, err := swapLastOffset(fsys, segmentPath(dir, b, logSuffix+swapSuffix), b)
		if err != nil {
			return false, err
		}
		for _, e := range entries {
			sb, _, ok := parseSegmentName(e.Name())
			if !ok || sb < b || sb > last {
				continue
			}
			if err := fsys.Remove(segmentPath(dir, sb, e.Name()[base.OffsetNameDigits:])); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("log: finish swap: %w", err)
			}
		}
	}
	// The replaced segments are gone for good before the copy appears, or
	// a crash could find both.
	if err := syncDir(fsys, dir); err != nil {
		return false, err
	}
	for _, b := range swaps {
		for _, suffix := range segmentSuffixes[1:] {
			p := segmentPath(dir, b, suffix)
			if err := fsys.Rename(p+swapSuffix, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("log: finish swap: %w", err)
			}
		}
		p := segmentPath(dir, b, logSuffix)
		if err := fsys.Rename(p+swapSuffix, p); err != nil {
			return false, fmt.Errorf("log: finish swap: %w", err)
		}
	}
	return true, syncDir(fsys, dir)
}

// swapLastOffset is the last offset of the last whole batch in the swap
// file at path, or b if it holds none. The file was fdatasync'ed before it
// got its name, so it holds whole batches; the walk stops at anything else.
func swapLastOffset(fsys vfs.FS, path string, b base.Offset) (base.Offset, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("log: finish swap: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("log: finish swap: %w", err)
	}
	r := &batchReader{f: f, size: fi.Size()}
	last, next := b, b
	for pos := int64(0); r.size-pos >= record.HeaderSize; {
		hb, err := r.at(pos, record.HeaderSize)
		if err != nil {
			return 0, err
		}
		h, err := record.ParseHeader(hb)
		if err != nil || checkFraming(&h, r.size-pos) != nil || h.BaseOffset < next {
			break
		}
		last, next = h.LastOffset(), h.NextOffset()
		pos += int64(h.Size())
	}
	return last, nil
}
