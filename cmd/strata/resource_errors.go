package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"syscall"
)

// explainResourceError turns an error of serve that ran out of disk space
// or of file descriptors into one line naming the file and the fix. A
// broker that fills its disk, or runs out of descriptors as it rolls a
// segment, fails the logs it could not write (each logs an error as it
// happens) and exits non-zero when stopped; it cannot start again until
// there is room (or a higher limit) to open and recover them. Other errors
// pass unchanged.
func explainResourceError(dataDir string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("no space left on the disk of %s%s: free space on it (or move log.dirs to a larger disk), then start strata again",
			dataDir, pathFailedWith(err, syscall.ENOSPC, ", writing "))
	case errors.Is(err, syscall.EMFILE):
		return fmt.Errorf("too many open files%s (strata may open %s; each log segment and each connection holds one): raise its limit (ulimit -n, or LimitNOFILE= under systemd) or use larger segments (segment.bytes), then start strata again",
			pathFailedWith(err, syscall.EMFILE, ", opening "), openFileLimit())
	case errors.Is(err, syscall.ENFILE):
		return fmt.Errorf("the system has too many open files%s: raise its limit (sysctl fs.file-max) or stop what holds them, then start strata again",
			pathFailedWith(err, syscall.ENFILE, ", opening "))
	}
	return err
}

// pathFailedWith is prefix and the path of the first *fs.PathError in
// err's tree that failed with errno, or "" when there is none.
func pathFailedWith(err error, errno syscall.Errno, prefix string) string {
	switch u := err.(type) {
	case *fs.PathError:
		if errors.Is(u.Err, errno) {
			return prefix + u.Path
		}
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if p := pathFailedWith(e, errno, prefix); p != "" {
				return p
			}
		}
	case interface{ Unwrap() error }:
		return pathFailedWith(u.Unwrap(), errno, prefix)
	}
	return ""
}

// openFileLimit is this process's RLIMIT_NOFILE, as words.
func openFileLimit() string {
	limit, ok := nofileLimit()
	if !ok {
		return "no more files than its limit allows"
	}
	return strconv.FormatUint(limit, 10) + " files at most"
}

// nofileLimit is this process's RLIMIT_NOFILE (the Go runtime raises the
// soft limit to the hard one at start); ok is false if it cannot be read.
func nofileLimit() (limit uint64, ok bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return l.Cur, true
}

// warnOpenFiles logs a warning when the broker, just started, already holds
// more than half the file descriptors its limit allows: its partitions'
// segments and its connections will grow into the rest, and past it a log
// fails as it rolls a segment. Where /proc/self/fd is missing it says
// nothing.
func warnOpenFiles(logger *slog.Logger) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	limit, ok := nofileLimit()
	if ok && openFilesNearLimit(uint64(len(fds)), limit) {
		logger.Warn("more than half the open-file limit is in use at start: each log segment and each connection holds a file; raise the limit (ulimit -n, or LimitNOFILE= under systemd) before a log fails rolling a segment",
			"open_files", len(fds), "limit", limit)
	}
}

// openFilesNearLimit reports whether open descriptors are more than half of
// limit.
func openFilesNearLimit(open, limit uint64) bool { return open > limit/2 }
