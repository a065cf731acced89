package tier

import (
	"os"

	"golang.org/x/sys/unix"
)

// preallocateRange reserves the blocks of [off, off+n) of the slot file
// the first time a slot is used: ext4 then writes a chunk several times
// faster than when it allocates blocks as the write goes. A failure only
// loses the speed-up.
func preallocateRange(f *os.File, off, n int64) {
	_ = unix.Fallocate(int(f.Fd()), 0, off, n)
}
