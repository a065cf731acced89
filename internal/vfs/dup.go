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
