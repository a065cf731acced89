package vfs

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Datasync is fdatasync(2), retried on EINTR.
func (f osFile) Datasync() error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
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
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
	}
	if serr != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), serr)
	}
	return nil
}
