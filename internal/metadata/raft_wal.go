package metadata

import (
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	raftwal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// raftWALSegmentBytes is the size of each Raft log segment file, which
// raft-wal preallocates (its default is 64 MiB). The metadata log is small
// (topics, partition states, brokers), and Raft snapshots truncate it: a
// smaller segment keeps a new node's footprint and the free space it needs
// to start small. A batch larger than it still fits: raft-wal seals a
// segment after the batch that fills it.
const raftWALSegmentBytes = 8 << 20

// openRaftWAL opens the Raft log in dir, creating it if needed. The caller
// owns the returned meta store and closes it after the WAL: WAL.Close
// leaves it (and its file lock) open, which would block the next open in
// this process.
//
// raft-wal must be v0.4.1 or later: before, a tail truncation (Raft's
// "clearing log suffix", when a follower drops entries a new leader does
// not have) marked the tail segment sealed without writing its index, and
// the next start failed with "sealed segment has no index block" (a panic
// in raft.NewRaft; hashicorp/raft-wal#31).
func openRaftWAL(dir string, logger hclog.Logger) (*raftwal.WAL, *metadb.BoltMetaDB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("metadata: create %s: %w", dir, err)
	}
	meta := &metadb.BoltMetaDB{}
	wal, err := raftwal.Open(dir, raftwal.WithMetaStore(meta), raftwal.WithLogger(logger),
		raftwal.WithSegmentSize(raftWALSegmentBytes))
	if err != nil {
		return nil, meta, fmt.Errorf("metadata: open raft wal: %w", err)
	}
	return wal, meta, nil
}
