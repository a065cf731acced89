package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// Open loads the log in o.Dir, creating the directory and a first segment at
// offset 0 if there is none. It first finishes any replacement that a crash
// interrupted past its commit point (finishSwaps), and any
// TruncateFullyAndStartAt that a crash interrupted. Without a clean-shutdown
// marker it recovers: segments at or after the recovery point are scanned
// batch by batch and cut at the first invalid batch, and the segments after a
// cut are deleted. When Open returns, DurableEnd() == End() and the marker is
// gone.
func Open(o Options) (*Log, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.FS = vfs.Or(o.FS)
	fsys := o.FS
	// The directory's own entry must be durable too, or a crash can take it
	// and every acknowledged batch in it away.
	if err := vfs.MkdirAllSynced(fsys, o.Dir); err != nil {
		return nil, fmt.Errorf("log: open: %w", err)
	}
	swapped, err := finishSwaps(fsys, o.Dir)
	if err != nil {
		return nil, err
	}
	if err := finishStartOverAtOpen(o); err != nil {
		return nil, err
	}
	bases, err := tidyDir(fsys, o.Dir)
	if err != nil {
		return nil, err
	}
	markerPath := filepath.Join(o.Dir, cleanShutdownName)
	_, err = fsys.Stat(markerPath)
	marker := err == nil
	// A swap finished here was interrupted: whatever the marker says, the
	// log did not stop cleanly after it.
	clean := marker && !swapped
	rp, rpOK, err := readRecoveryPoint(fsys, o.Dir)
	if err != nil {
		return nil, err
	}
	segs, err := loadSegments(o, bases, clean, rp, rpOK)
	if err != nil {
		closeSegments(segs)
		return nil, err
	}
	if len(segs) == 0 {
		s, err := createSegment(o.Dir, 0, o)
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	if err := makeDurable(fsys, o.Dir, segs); err != nil {
		closeSegments(segs)
		return nil, err
	}
	end := segs[len(segs)-1].nextOffset
	// The recovery point goes before the marker is removed: from here on a
	// crash is unclean and recovery starts from end.
	if err := writeRecoveryPoint(fsys, o.Dir, end); err != nil {
		closeSegments(segs)
		return nil, err
	}
	if marker {
		if err := fsys.Remove(markerPath); err != nil {
			closeSegments(segs)
			return nil, fmt.Errorf("log: remove clean-shutdown marker: %w", err)
		}
		if err := syncDir(fsys, o.Dir); err != nil {
			closeSegments(segs)
			return nil, err
		}
	}
	l := &Log{dir: o.Dir, clock: o.Clock, fs: fsys, onFail: o.OnFail, onSync: o.OnSync}
	l.mu.opts = o
	l.mu.segs = segs
	l.mu.durableEnd = end
	l.mu.persistedRP = end
	if o.ZeroFill {
		l.zeroKick = make(chan struct{}, 1)
		go l.zeroFiller(l.zeroKick) // kicked by appends
	}
	return l, nil
}

// tidyDir removes leftovers of interrupted operations and index files whose
// .log is gone, and returns the base offsets of the .log files in order.
func tidyDir(fsys vfs.FS, dir string) ([]base.Offset, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("log: open: %w", err)
	}
	var logs []base.Offset
	var indexes []string
	hasLog := map[base.Offset]bool{}
	removed := false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		if isLeftover(name) {
			if err := fsys.Remove(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("log: remove leftover: %w", err)
			}
			removed = true
			continue
		}
		b, suffix, ok := parseSegmentName(name)
		switch {
		case !ok:
		case suffix == logSuffix:
			logs = append(logs, b)
			hasLog[b] = true
		default:
			indexes = append(indexes, name)
		}
	}
	for _, name := range indexes {
		if b, _, _ := parseSegmentName(name); !hasLog[b] {
			if err := fsys.Remove(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("log: remove orphan index: %w", err)
			}
			removed = true
		}
	}
	if removed {
		if err := syncDir(fsys, dir); err != nil {
			return nil, err
		}
	}
	slices.Sort(logs)
	return logs, nil
}

// loadSegments opens the segments in order and keeps the longest valid
// prefix; the files of the rest are deleted. A segment's batches ascend
// inside [its base, its successor's base), with gaps where compaction
// removed records or a follower's leader had none (recoverSegment). A
// segment whose data ends short of its successor's base is kept with its
// successor only if that base is at or below the recovery point (see
// doc.go); without a valid recovery point, every successor is kept.
func loadSegments(o Options, bases []base.Offset, clean bool, rp base.Offset, rpOK bool) ([]*segment, error) {
	now := o.Clock.Now()
	var segs []*segment
	for i, b := range bases {
		last := i == len(bases)-1
		var bounds segmentBounds
		// boundaryGapsUpTo: the successor may start past this segment's
		// data end only if it starts at or below it.
		boundaryGapsUpTo := b
		if !last {
			bounds.limit, bounds.hasLimit = bases[i+1], true
		}
		switch {
		case rpOK:
			boundaryGapsUpTo = max(b, rp)
		case !last:
			boundaryGapsUpTo = bases[i+1]
		}
		s := newSegmentState(o.Dir, b, o)
		f, err := o.FS.OpenFile(s.path(logSuffix), os.O_RDWR, 0)
		if err != nil {
			return segs, fmt.Errorf("log: open segment: %w", err)
		}
		s.file = f
		segs = append(segs, s)
		// A segment is trusted if the log was shut down cleanly, or if it lies
		// wholly below the recovery point (its successor starts at or below it).
		trusted := clean || (rpOK && !last && bases[i+1] <= rp)
		if trusted {
			err := loadTrusted(s)
			if err == nil && bounds.hasLimit && s.dataEnd > bounds.limit {
				err = errRebuild // runs into its successor: the scan cuts it
			}
			if err != nil && !errors.Is(err, errRebuild) {
				return segs, err
			}
			trusted = err == nil
		}
		truncated := false
		if !trusted {
			if truncated, err = recoverSegment(s, o, now, bounds); err != nil {
				return segs, err
			}
		} else {
			s.syncedBytes, s.indexDurable = s.sizeBytes, true
		}
		// segment.ms restarts at open: using record timestamps instead (as Kafka
		// does) rolls every segment at once when producers send old timestamps.
		s.rollStartAt = now
		if last {
			break
		}
		// The successor must continue s: from its data end, or across a gap
		// (compaction's, or a roll's across a follower's gap), which the
		// recovery point covers once a Sync made s and its successor
		// durable. A successor past a cut, or past a gap above the
		// recovery point, is what a crash left of a truncation, or of an
		// unsynced tail of s that the crash lost (the directory entry of
		// the successor survived, the data did not), and goes: it holds
		// nothing a Sync acknowledged.
		if truncated || (s.dataEnd != bases[i+1] && bases[i+1] > boundaryGapsUpTo) {
			return segs, dropSegments(o, bases[i+1:])
		}
		s.nextOffset = bases[i+1]
	}
	return segs, nil
}

// dropSegments deletes the files of segments that recovery cut off, newest
// first (see removeSegmentFiles).
func dropSegments(o Options, bases []base.Offset) error {
	if len(bases) == 0 {
		return nil
	}
	segs := make([]*segment, len(bases))
	for i, b := range bases {
		segs[i] = newSegmentState(o.Dir, b, o)
	}
	return removeSegmentFiles(o.FS, reversed(segs), o.Dir)
}

// makeDurable syncs what recovery wrote or read from the page cache (which a
// crashed process may have left unsynced), so that DurableEnd can be End.
func makeDurable(fsys vfs.FS, dir string, segs []*segment) error {
	for _, s := range segs {
		if s.syncedBytes < s.sizeBytes {
			if err := fdatasync(s); err != nil {
				return err
			}
			s.syncedBytes = s.sizeBytes
		}
		if !s.indexDurable {
			if err := syncIndexFiles(s); err != nil {
				return err
			}
			s.indexDurable = true
		}
	}
	return syncDir(fsys, dir)
}

func closeSegments(segs []*segment) {
	for _, s := range segs {
		if s.file != nil {
			_ = s.file.Close() // abandoning a failed open
		}
	}
}
