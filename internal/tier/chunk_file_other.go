//go:build !linux

package tier

import "os"

// preallocateRange does nothing where fallocate(2) does not exist.
func preallocateRange(*os.File, int64, int64) {}

func mapBuffer(n int) []byte { return make([]byte, n) }

func unmapBuffer([]byte) {}
