package vfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNoDescriptor means a File is not backed by an operating-system file,
// so it cannot be handed to sendfile.
var ErrNoDescriptor = errors.New("vfs: file has no OS descriptor")

// DupOS returns a new *os.File on a duplicate descriptor of f, for a reader
// that must outlive f's owner closing or deleting it (a fetch being sent
// with sendfile while retention removes the segment). The caller closes it.
func DupOS(f File) (*os.File, error) {
	of, ok := f.(osFile)
	if !ok {
		return nil, ErrNoDescriptor
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return nil, err
	}
	var (
		dupFd  int
		dupErr error
	)
	if err := rc.Control(func(fd uintptr) {
		dupFd, dupErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return os.NewFile(uintptr(dupFd), of.Name()), nil
}

// Preallocate reserves disk blocks for [off, off+n) of f without changing
// its size (fallocate FALLOC_FL_KEEP_SIZE), so later appends there skip the
// file system's block allocation. It is only a hint: files without an OS
// descriptor, and file systems that cannot do it, return an error the
// caller may ignore.
func Preallocate(f File, off, n int64) error {
	of, ok := f.(osFile)
	if !ok {
		return ErrNoDescriptor
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		ferr = unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
	}); err != nil {
		return err
	}
	return ferr
}
