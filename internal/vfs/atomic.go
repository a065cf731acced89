package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// WriteFileAtomic replaces dir/name with data on the real file system; see
// WriteFileAtomicFS.
func WriteFileAtomic(dir, name string, data []byte) error {
	return WriteFileAtomicFS(Default, dir, name, data)
}

// WriteFileAtomicFS replaces dir/name with data: temp → fsync → rename →
// fsync dir, so a crash leaves either the old file or the new one. On an
// error before the rename the temp file is removed (best effort).
func WriteFileAtomicFS(fsys FS, dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := fsys.OpenFile(tmp, fileWriteFlags, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	var serr error
	if werr == nil {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = fsys.Remove(tmp) // debris; a reader ignores .tmp files
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// ReadFile reads the whole file name.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, readFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if n == len(b) {
		return b, nil
	}
	return nil, fmt.Errorf("reading %s: %w", name, err)
}

// SyncDir fsyncs a directory on the real file system, making renames and
// creations in it durable.
func SyncDir(dir string) error { return Default.SyncDir(dir) }

// MkdirAllSynced creates dir and its missing parents, and makes each
// created entry durable by syncing its parent, so that files later made
// durable in dir cannot vanish with the directory.
func MkdirAllSynced(fsys FS, dir string) error {
	dir = filepath.Clean(dir)
	var created []string // deepest first
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := fsys.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		created = append(created, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(created[i])); err != nil {
			return err
		}
	}
	return nil
}

// RemoveDir removes dir on the real file system; see RemoveDirFS.
func RemoveDir(dir string) error { return RemoveDirFS(Default, dir) }

// RemoveDirFS renames dir to dir.deleted (durably) and then removes it, so a
// crash midway leaves nothing that looks like live data. A missing dir is
// not an error.
func RemoveDirFS(fsys FS, dir string) error {
	gone := dir + ".deleted"
	if err := fsys.Rename(dir, gone); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	return fsys.RemoveAll(gone)
}
