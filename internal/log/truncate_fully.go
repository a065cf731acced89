package log

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/vfs"
)

// startOverName is the intent file of TruncateFullyAndStartAt: while it
// exists, the log is being emptied to start at the offset it holds (in the
// recovery-point encoding), and Open finishes the job before it looks at
// any segment. Writing it is the commit point: a crash before leaves the
// log as it was, a crash after leaves it empty at that offset.
const startOverName = "start-over"

// TruncateFullyAndStartAt deletes every segment and starts an empty log at
// o, as Kafka's LocalLog.truncateFullyAndStartAt does for a follower that
// must start over at its leader's log start (its log is empty, or wholly
// below the leader's). o may be below, inside or past the current range.
// Afterwards Start() == End() == DurableEnd() == o. It is crash-atomic:
// after a crash at any point Open finds the old log or the empty one at o.
// A Replacement begun before it is stale.
func (l *Log) TruncateFullyAndStartAt(o base.Offset) error {
	if o < 0 {
		return fmt.Errorf("%w: start over at %d", ErrOffsetOutOfRange, o)
	}
	l.lifecycle.Lock()
	defer l.lifecycle.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return err
	}
	if err := writeFileAtomic(l.fs, l.dir, startOverName, encodeRecoveryPoint(o)); err != nil {
		return l.failLocked(err)
	}
	// On a failure below, the log fails with its old segments listed
	// (their files closed or gone): every later call reports the failure.
	if err := removeSegmentFiles(l.fs, reversed(l.mu.segs), l.dir); err != nil {
		return l.failLocked(err)
	}
	s, err := l.finishStartOver(o)
	if err != nil {
		return l.failLocked(err)
	}
	clear(l.mu.segs)
	l.mu.segs = []*segment{s}
	l.mu.durableEnd, l.mu.persistedRP, l.mu.dirDirty = o, o, false
	return nil
}

// finishStartOver creates the empty segment at o once every old segment is
// gone, persists o as the recovery point and removes the intent file.
func (l *Log) finishStartOver(o base.Offset) (*segment, error) {
	s, err := createSegment(l.dir, o, l.mu.opts)
	if err != nil {
		return nil, err
	}
	if err := startOverDone(l.fs, l.dir, o); err != nil {
		_ = s.file.Close() // the log fails; the file is not used again
		return nil, err
	}
	return s, nil
}

// startOverDone makes the new segment's files durable, writes the recovery
// point o and removes the intent file, durably: the last step of a start
// over, run by TruncateFullyAndStartAt and by Open.
func startOverDone(fsys vfs.FS, dir string, o base.Offset) error {
	if err := syncDir(fsys, dir); err != nil {
		return err
	}
	if err := writeRecoveryPoint(fsys, dir, o); err != nil {
		return err
	}
	if err := fsys.Remove(filepath.Join(dir, startOverName)); err != nil {
		return fmt.Errorf("log: remove %s: %w", startOverName, err)
	}
	return syncDir(fsys, dir)
}

// finishStartOverAtOpen completes a TruncateFullyAndStartAt that a crash
// interrupted, before Open looks at the segments: every segment file left
// goes, and an empty segment starts at the intent's offset. Redoing it
// after a crash in the middle is safe: the intent file is removed last.
func finishStartOverAtOpen(o Options) error {
	fsys := o.FS
	data, err := vfs.ReadFile(fsys, filepath.Join(o.Dir, startOverName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("log: open: read %s: %w", startOverName, err)
	}
	at, ok := decodeRecoveryPoint(data)
	if !ok {
		// It was written whole (temp, fsync, rename) or not at all.
		return fmt.Errorf("%w: %s in %s does not decode; remove it to keep the old segments", ErrCorrupt, startOverName, o.Dir)
	}
	entries, err := fsys.ReadDir(o.Dir)
	if err != nil {
		return fmt.Errorf("log: open: %w", err)
	}
	for _, e := range entries {
		if _, _, ok := parseSegmentName(e.Name()); ok && !e.IsDir() {
			if err := fsys.Remove(filepath.Join(o.Dir, e.Name())); err != nil {
				return fmt.Errorf("log: open: finishing a start over: %w", err)
			}
		}
	}
	if err := syncDir(fsys, o.Dir); err != nil {
		return err
	}
	s, err := createSegment(o.Dir, at, o)
	if err != nil {
		return err
	}
	_ = s.file.Close() // loadSegments opens it again
	return startOverDone(fsys, o.Dir, at)
}
