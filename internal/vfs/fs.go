package vfs

import (
	"io"
	"io/fs"
	"os"
)

// FS is the set of file-system operations storage code needs. Paths are
// slash- or OS-separated as for package os. Errors wrap the fs.Err* values
// (fs.ErrNotExist, fs.ErrExist, fs.ErrClosed) so errors.Is classifies them
// the same way for every implementation.
type FS interface {
	// OpenFile opens name with os.O_* flags; O_RDONLY, O_WRONLY, O_RDWR,
	// O_CREATE, O_EXCL, O_TRUNC and O_APPEND are honoured.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Rename moves oldname to newname, replacing a file there; an existing
	// directory at newname is never replaced (EEXIST, as os.Rename on
	// Unix). Durable after SyncDir of both parents.
	Rename(oldname, newname string) error
	// Remove unlinks a file or an empty directory. Durable after SyncDir.
	Remove(name string) error
	// RemoveAll removes name and everything below it; a missing name is not an error.
	RemoveAll(name string) error
	// MkdirAll creates name and any missing parents. The new entries are
	// durable only after SyncDir of each parent (see MkdirAllSynced).
	MkdirAll(name string, perm fs.FileMode) error
	// ReadDir lists name's entries sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the entries of directory name durable: the creates,
	// renames and removes done in it so far.
	SyncDir(name string) error
}

// File is an open file. ReadAt may be called concurrently with other
// ReadAt calls and with writes beyond the range it reads.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	io.Closer
	// Sync makes the file's content and metadata durable (fsync).
	Sync() error
	// Datasync makes the content and the metadata needed to read it back
	// (the size) durable, but not timestamps (fdatasync). For the
	// durability model it is the same as Sync.
	Datasync() error
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
}

// Default is the real operating-system file system.
var Default FS = osFS{}

// OS returns the real operating-system file system.
func OS() FS { return Default }

// Or returns fsys, or Default if fsys is nil.
func Or(fsys FS) FS {
	if fsys == nil {
		return Default
	}
	return fsys
}

// osFS forwards to package os; its only addition is SyncDir.
type osFS struct{}

// osFile adds Datasync to *os.File; every other method is os's own.
type osFile struct{ *os.File }

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

const (
	readFlags      = os.O_RDONLY
	fileWriteFlags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
)
