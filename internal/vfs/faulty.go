package vfs

import (
	"io/fs"
	"os"
)

// Op names a file-system operation, for error injection and tracing.
type Op int

const (
	OpOpen      Op = iota + 1 // OpenFile without O_CREATE
	OpCreate                  // OpenFile with O_CREATE
	OpRead                    // File.ReadAt
	OpWrite                   // File.Write, File.WriteAt
	OpSync                    // File.Sync
	OpDatasync                // File.Datasync
	OpTruncate                // File.Truncate
	OpFileStat                // File.Stat
	OpClose                   // File.Close
	OpRename                  // FS.Rename; the path given to inject is the old name
	OpRemove                  // FS.Remove
	OpRemoveAll               // FS.RemoveAll
	OpMkdirAll                // FS.MkdirAll
	OpReadDir                 // FS.ReadDir
	OpStat                    // FS.Stat
	OpSyncDir                 // FS.SyncDir
)

var opNames = [...]string{
	OpOpen: "open", OpCreate: "create", OpRead: "read", OpWrite: "write",
	OpSync: "sync", OpDatasync: "datasync", OpTruncate: "truncate",
	OpFileStat: "fstat", OpClose: "close", OpRename: "rename", OpRemove: "remove",
	OpRemoveAll: "removeall", OpMkdirAll: "mkdirall", OpReadDir: "readdir",
	OpStat: "stat", OpSyncDir: "syncdir",
}

func (o Op) String() string {
	if o <= 0 || int(o) >= len(opNames) {
		return "op?"
	}
	return opNames[o]
}

// IsSync reports whether o makes something durable: Sync, Datasync, SyncDir.
func (o Op) IsSync() bool { return o == OpSync || o == OpDatasync || o == OpSyncDir }

// NewFaulty returns fsys with inject called before every operation, with
// the operation and the path it acts on (for file operations, the name the
// file was opened by). If inject returns an error the operation is not done
// and returns that error; Close is the exception: it still releases the
// underlying file. inject may be called concurrently; it may also record the
// calls (a trace) and always return nil.
func NewFaulty(fsys FS, inject func(op Op, path string) error) FS {
	return &faultyFS{fs: fsys, inject: inject}
}

type faultyFS struct {
	fs     FS
	inject func(op Op, path string) error
}

type faultyFile struct {
	f    File
	name string
	ffs  *faultyFS
}

func (x *faultyFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	op := OpOpen
	if flag&os.O_CREATE != 0 {
		op = OpCreate
	}
	if err := x.inject(op, name); err != nil {
		return nil, err
	}
	f, err := x.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultyFile{f: f, name: name, ffs: x}, nil
}

func (x *faultyFS) Rename(oldname, newname string) error {
	if err := x.inject(OpRename, oldname); err != nil {
		return err
	}
	return x.fs.Rename(oldname, newname)
}

func (x *faultyFS) Remove(name string) error {
	if err := x.inject(OpRemove, name); err != nil {
		return err
	}
	return x.fs.Remove(name)
}

func (x *faultyFS) RemoveAll(name string) error {
	if err := x.inject(OpRemoveAll, name); err != nil {
		return err
	}
	return x.fs.RemoveAll(name)
}

func (x *faultyFS) MkdirAll(name string, perm fs.FileMode) error {
	if err := x.inject(OpMkdirAll, name); err != nil {
		return err
	}
	return x.fs.MkdirAll(name, perm)
}

func (x *faultyFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := x.inject(OpReadDir, name); err != nil {
		return nil, err
	}
	return x.fs.ReadDir(name)
}

func (x *faultyFS) Stat(name string) (fs.FileInfo, error) {
	if err := x.inject(OpStat, name); err != nil {
		return nil, err
	}
	return x.fs.Stat(name)
}

func (x *faultyFS) SyncDir(name string) error {
	if err := x.inject(OpSyncDir, name); err != nil {
		return err
	}
	return x.fs.SyncDir(name)
}

func (f *faultyFile) ReadAt(b []byte, off int64) (int, error) {
	if err := f.ffs.inject(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.f.ReadAt(b, off)
}

func (f *faultyFile) WriteAt(b []byte, off int64) (int, error) {
	if err := f.ffs.inject(OpWrite, f.name); err != nil {
		return 0, err
	}
	return f.f.WriteAt(b, off)
}

func (f *faultyFile) Write(b []byte) (int, error) {
	if err := f.ffs.inject(OpWrite, f.name); err != nil {
		return 0, err
	}
	return f.f.Write(b)
}

func (f *faultyFile) Sync() error {
	if err := f.ffs.inject(OpSync, f.name); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f *faultyFile) Datasync() error {
	if err := f.ffs.inject(OpDatasync, f.name); err != nil {
		return err
	}
	return f.f.Datasync()
}

func (f *faultyFile) Truncate(size int64) error {
	if err := f.ffs.inject(OpTruncate, f.name); err != nil {
		return err
	}
	return f.f.Truncate(size)
}

func (f *faultyFile) Stat() (fs.FileInfo, error) {
	if err := f.ffs.inject(OpFileStat, f.name); err != nil {
		return nil, err
	}
	return f.f.Stat()
}

func (f *faultyFile) Close() error {
	ierr := f.ffs.inject(OpClose, f.name)
	err := f.f.Close()
	if ierr != nil {
		return ierr
	}
	return err
}
