//go:build !linux

package tier

import "os"

// preallocateRange does nothing where fallocate(2) does not exist.
func preallocateRange(*os.File, int64, int64) {}
