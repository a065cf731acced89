package main

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// explainDiskFull turns an error of serve that ran out of space into one
// line naming the data directory, the file being written, and the fix. A
// broker that fills its disk fails the logs it could not write (each logs
// an error as it happens) and exits non-zero when stopped; it cannot start
// again until there is room to recover them. Other errors pass unchanged.
func explainDiskFull(dataDir string, err error) error {
	if !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	where := ""
	if path := firstFullPath(err); path != "" {
		where = ", writing " + path
	}
	return fmt.Errorf("no space left on the disk of %s%s: free space on it (or move log.dirs to a larger disk), then start strata again", dataDir, where)
}

// firstFullPath is the path of the first *fs.PathError in err's tree that
// failed with ENOSPC, or "".
func firstFullPath(err error) string {
	switch u := err.(type) {
	case *fs.PathError:
		if errors.Is(u.Err, syscall.ENOSPC) {
			return u.Path
		}
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if p := firstFullPath(e); p != "" {
				return p
			}
		}
	case interface{ Unwrap() error }:
		return firstFullPath(u.Unwrap())
	}
	return ""
}
