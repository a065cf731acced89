//go:build !linux

package tier

import "os"

// preallocate does nothing where fallocate(2) does not exist.
func preallocate(*os.File, int64) {}
