package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// What `strata inspect tier` reads of a partition's local directory. It
// only reads, and it reads what a stopped broker left, as the broker's
// recovery would see it: a segment's batches run from its first byte to
// the first torn or short header (recovery truncates there).

// logStartFileName is partition's log-start-offset file: the log start,
// in decimal, when it is not 0.
const logStartFileName = "log-start-offset"

// localSegment is one local segment file and the offsets in it.
type localSegment struct {
	Range     base.Range
	SizeBytes int64 // of the whole batches
	Path      string
}

// localPartition is what the partition's directory holds.
type localPartition struct {
	Dir      string
	Exists   bool
	LogStart base.Offset
	Segments []localSegment // ascending by base offset
}

// readLocalPartition reads dir, the partition's directory under the data
// dir. A missing dir is a partition with no local data here (Exists false).
func readLocalPartition(dir string) (localPartition, error) {
	lp := localPartition{Dir: dir}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return lp, nil
	}
	if err != nil {
		return lp, fmt.Errorf("partition directory %s: %v", dir, unwrapPath(err))
	}
	lp.Exists = true
	if lp.LogStart, err = readLogStartFile(dir); err != nil {
		return lp, err
	}
	for _, e := range entries {
		baseOffset, ok := segmentFileBase(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		seg, err := scanLocalSegment(filepath.Join(dir, e.Name()), baseOffset)
		if err != nil {
			return lp, err
		}
		lp.Segments = append(lp.Segments, seg)
	}
	slices.SortFunc(lp.Segments, func(a, b localSegment) int { return int(a.Range.Start - b.Range.Start) })
	return lp, nil
}

// segmentFileBase parses "00000000000000000042.log" into 42.
func segmentFileBase(name string) (base.Offset, bool) {
	digits, ok := strings.CutSuffix(name, ".log")
	if !ok || len(digits) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return base.Offset(n), true
}

func readLogStartFile(dir string) (base.Offset, error) {
	path := filepath.Join(dir, logStartFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s is corrupt: %q", path, data)
	}
	return base.Offset(v), nil
}

// scanLocalSegment walks the batch headers of one segment file: its range
// runs from baseOffset to one past the last whole batch (baseOffset when
// it has none).
func scanLocalSegment(path string, baseOffset base.Offset) (localSegment, error) {
	seg := localSegment{Range: base.Range{Start: baseOffset, End: baseOffset}, Path: path}
	f, err := os.Open(path)
	if err != nil {
		return seg, fmt.Errorf("cannot read segment %s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return seg, fmt.Errorf("cannot read segment %s: %v", path, unwrapPath(err))
	}
	var hdr [record.HeaderSize]byte
	for pos := int64(0); pos+record.HeaderSize <= fi.Size(); {
		if _, err := f.ReadAt(hdr[:], pos); err != nil && !errors.Is(err, io.EOF) {
			return seg, fmt.Errorf("cannot read segment %s: %v", path, unwrapPath(err))
		}
		h, err := record.ParseHeader(hdr[:])
		if err != nil || h.Size() < record.HeaderSize || pos+int64(h.Size()) > fi.Size() || h.BaseOffset < seg.Range.End {
			break // torn or preallocated tail: recovery truncates here
		}
		seg.Range.End = h.LastOffset() + 1
		pos += int64(h.Size())
		seg.SizeBytes = pos
	}
	return seg, nil
}
