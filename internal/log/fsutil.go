package log

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeFileAtomic replaces dir/name with data so that a crash leaves either the
// old or the new content: write name.tmp → fsync → rename → fsync dir.
func writeFileAtomic(dir, name string, data []byte) error {
	final := filepath.Join(dir, name)
	tmp := final + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("log: write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("log: write %s: %w", name, err)
	}
	return syncDir(dir)
}

// syncDir makes the directory's entries (creates, renames, unlinks) durable.
func syncDir(dir string) error {
	if err := syncPath(dir); err != nil {
		return fmt.Errorf("log: sync dir: %w", err)
	}
	return nil
}

// syncPath opens path read-only and fsyncs it.
func syncPath(path string) error {
	f, err := os.Open(path)
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

// fdatasync flushes f's data and the metadata needed to read it back (its
// size), not its timestamps.
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("log: fdatasync: %w", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("log: fdatasync: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("log: fdatasync %s: %w", f.Name(), serr)
	}
	return nil
}
