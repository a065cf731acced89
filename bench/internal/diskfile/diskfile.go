// Package diskfile holds what the disk probes (bench/disklatency,
// bench/diskstall) do to a file before they time it.
package diskfile

import (
	"fmt"

	"github.com/strata-broker/strata/internal/vfs"
)

// ZeroFill writes zeros over f's first size bytes and syncs them, so that
// writes timed afterwards land in written blocks inside the file's size:
// what a zero-filled active segment gives an append.
func ZeroFill(f vfs.File, size int64) error {
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off); err != nil {
			return fmt.Errorf("zero-filling: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing the zeros: %w", err)
	}
	return nil
}
