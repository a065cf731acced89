package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func TestExplainResourceError(t *testing.T) {
	full := func(path string) error { return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC} }
	other := errors.New("metadata: quorum not ready")
	tests := []struct {
		name string
		err  error
		want string // "" means err comes back unchanged
	}{
		{"not a full disk", other, ""},
		{"an I/O error", &fs.PathError{Op: "write", Path: "/d/x", Err: syscall.EIO}, ""},
		{"one partition at start", fmt.Errorf("partition t-2: log: write index: %w", full("/d/t-2/0.index")),
			"no space left on the disk of /d, writing /d/t-2/0.index: free space on it (or move log.dirs to a larger disk), then start strata again"},
		{"several partitions at stop", errors.Join(nil,
			fmt.Errorf("closing t-1: %w", &fs.PathError{Op: "fsync", Path: "/d/t-1", Err: syscall.EIO}),
			fmt.Errorf("closing t-0: log: append: %w", full("/d/t-0/0.log")),
			fmt.Errorf("closing t-3: log: append: %w", full("/d/t-3/0.log"))),
			"no space left on the disk of /d, writing /d/t-0/0.log: free space on it (or move log.dirs to a larger disk), then start strata again"},
		{"no path", fmt.Errorf("metadata: open raft wal: %w", syscall.ENOSPC),
			"no space left on the disk of /d: free space on it (or move log.dirs to a larger disk), then start strata again"},
		{"too many open files at start", fmt.Errorf("partition t-7: log: open segment: %w", &fs.PathError{Op: "open", Path: "/d/t-7/00000000000000000000.log", Err: syscall.EMFILE}),
			"too many open files, opening /d/t-7/00000000000000000000.log (strata may open " + openFileLimit() + "; each log segment and each connection holds one): raise its limit (ulimit -n, or LimitNOFILE= under systemd) or use larger segments (segment.bytes), then start strata again"},
		{"a system out of files", fmt.Errorf("metadata: open raft wal: %w", &fs.PathError{Op: "open", Path: "/d/meta/wal/1.wal", Err: syscall.ENFILE}),
			"the system has too many open files, opening /d/meta/wal/1.wal: raise its limit (sysctl fs.file-max) or stop what holds them, then start strata again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := explainResourceError("/d", tt.err)
			if tt.want == "" {
				if got != tt.err {
					t.Fatalf("explainResourceError(%v) = %v, want it unchanged", tt.err, got)
				}
				return
			}
			if got.Error() != tt.want {
				t.Errorf("explainResourceError(%v)\n = %s\nwant %s", tt.err, got, tt.want)
			}
			if strings.Contains(got.Error(), "\n") {
				t.Errorf("%q is more than one line", got)
			}
		})
	}
}

func TestOpenFilesNearLimit(t *testing.T) {
	for _, tc := range []struct {
		open, limit uint64
		want        bool
	}{
		{40, 20000, false},
		{10000, 20000, false},
		{10001, 20000, true},
		{60, 64, true},
		{0, 0, false},
		{1, 1, true},
	} {
		if got := openFilesNearLimit(tc.open, tc.limit); got != tc.want {
			t.Errorf("openFilesNearLimit(%d, %d) = %v, want %v", tc.open, tc.limit, got, tc.want)
		}
	}
}
