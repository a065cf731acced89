package log

import (
	"fmt"
	"os"

	"github.com/strata-broker/strata/internal/vfs"
)

// writeFileAtomic replaces dir/name with data so that a crash leaves either the
// old or the new content: write name.tmp → fsync → rename → fsync dir.
func writeFileAtomic(fsys vfs.FS, dir, name string, data []byte) error {
	if err := vfs.WriteFileAtomicFS(fsys, dir, name, data); err != nil {
		return fmt.Errorf("log: write %s: %w", name, err)
	}
	return nil
}

// syncDir makes the directory's entries (creates, renames, unlinks) durable.
func syncDir(fsys vfs.FS, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("log: sync dir: %w", err)
	}
	return nil
}

// syncPath opens path read-only and fsyncs it.
func syncPath(fsys vfs.FS, path string) error {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("log: sync %s: %w", path, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("log: sync %s: %w", path, err)
	}
	return nil
}

// fdatasync flushes s's .log data and the metadata needed to read it back
// (its size), not its timestamps.
func fdatasync(s *segment) error {
	if err := s.file.Datasync(); err != nil {
		return fmt.Errorf("log: fdatasync %s: %w", s.path(logSuffix), err)
	}
	return nil
}
