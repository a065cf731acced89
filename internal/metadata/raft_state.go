package metadata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// HasRaftState reports whether dir, an Options.Dir, holds Raft state (a
// log entry or a snapshot): what Open bootstraps a quorum only without. A
// directory that does not exist holds none. The Store of dir must not be
// open.
func HasRaftState(dir string) (bool, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	hlog := hclog.NewNullLogger()
	wal, meta, err := openRaftWAL(filepath.Join(dir, "wal"), hlog)
	if meta != nil {
		defer meta.Close() // after the WAL: openRaftWAL
	}
	if err != nil {
		return false, err
	}
	defer wal.Close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, hlog)
	if err != nil {
		return false, fmt.Errorf("metadata: open snapshot store: %w", err)
	}
	return raft.HasExistingState(wal, wal, snaps)
}
