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

// mapBuffer maps n bytes of anonymous memory outside the Go heap; if the
// mapping fails, the buffer comes from the heap.
func mapBuffer(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// unmapBuffer releases a buffer of mapBuffer; a heap one is left to the GC.
func unmapBuffer(b []byte) {
	_ = unix.Munmap(b) // EINVAL for a heap buffer: nothing to do
}
