// Package vfs is the file-system seam: the crash-safe file protocol used by
// every package that writes small state files.
package vfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces dir/name with data: temp → fsync → rename →
// fsync dir, so a crash leaves either the old file or the new one.
func WriteFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making renames and creations in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// RemoveDir renames dir to dir.deleted (durably) and then removes it, so a
// crash midway leaves nothing that looks like live data. A missing dir is
// not an error.
func RemoveDir(dir string) error {
	gone := dir + ".deleted"
	if err := os.Rename(dir, gone); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := SyncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	return os.RemoveAll(gone)
}
