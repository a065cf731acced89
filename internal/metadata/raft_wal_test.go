package metadata

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// A follower that drops the tail of its Raft log for a new leader's
// ("clearing log suffix") must start again afterwards, with every entry it
// kept. raft-wal v0.4.0 sealed the tail segment without its index, and the
// next start panicked in raft.NewRaft; a cluster chaos test found it after
// a SIGKILL (hashicorp/raft-wal#31).
func TestRaftWALReopensAfterTailTruncation(t *testing.T) {
	for _, tc := range []struct {
		name string
		// cut drops entries cut..10; then rewritten entries follow it.
		cut, rewritten uint64
	}{
		{"last entry dropped", 10, 0},
		{"tail dropped and written again", 6, 3},
		{"all but the first dropped", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			wal, meta := openTestWAL(t, dir)
			storeEntries(t, wal, 1, 10, 1)
			if err := wal.DeleteRange(tc.cut, 10); err != nil {
				t.Fatalf("DeleteRange(%d, 10): %v", tc.cut, err)
			}
			storeEntries(t, wal, tc.cut, tc.cut+tc.rewritten-1, 2)
			closeTestWAL(t, wal, meta)

			wal, meta = openTestWAL(t, dir)
			defer closeTestWAL(t, wal, meta)
			last := tc.cut + tc.rewritten - 1
			if got, err := wal.LastIndex(); err != nil || got != last {
				t.Fatalf("LastIndex after reopening = %d, %v; want %d", got, err, last)
			}
			for i := uint64(1); i <= last; i++ {
				var l raft.Log
				if err := wal.GetLog(i, &l); err != nil {
					t.Fatalf("GetLog(%d) after reopening: %v", i, err)
				}
				term := uint64(1)
				if i >= tc.cut {
					term = 2
				}
				if want := entryData(i, term); l.Term != term || string(l.Data) != want {
					t.Fatalf("entry %d after reopening: term %d data %q, want term %d data %q", i, l.Term, l.Data, term, want)
				}
			}
		})
	}
}

func openTestWAL(t *testing.T, dir string) (*raftwal.WAL, *metadb.BoltMetaDB) {
	t.Helper()
	wal, meta, err := openRaftWAL(dir, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return wal, meta
}

func closeTestWAL(t *testing.T, wal *raftwal.WAL, meta *metadb.BoltMetaDB) {
	t.Helper()
	if err := wal.Close(); err != nil {
		t.Fatalf("closing the wal: %v", err)
	}
	if err := meta.Close(); err != nil {
		t.Fatalf("closing its meta store: %v", err)
	}
}

// storeEntries writes entries first..last (none when last < first) of term.
func storeEntries(t *testing.T, wal raft.LogStore, first, last, term uint64) {
	t.Helper()
	var logs []*raft.Log
	for i := first; i <= last; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte(entryData(i, term))})
	}
	if len(logs) == 0 {
		return
	}
	if err := wal.StoreLogs(logs); err != nil {
		t.Fatalf("StoreLogs %d..%d: %v", first, last, err)
	}
}

func entryData(index, term uint64) string { return fmt.Sprintf("entry %d of term %d", index, term) }

// The Raft log rolls to a new segment file once one holds
// raftWALSegmentBytes, each preallocated to that size, and reads back
// across them after a restart.
func TestRaftWALSegmentsRollAtTheirSize(t *testing.T) {
	dir := t.TempDir()
	wal, meta := openTestWAL(t, dir)
	const entries, entryBytes = 24, 1 << 20
	payload := func(i uint64) []byte { return bytes.Repeat([]byte{byte(i)}, entryBytes) }
	for i := uint64(1); i <= entries; i++ {
		if err := wal.StoreLog(&raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: payload(i)}); err != nil {
			t.Fatal(err)
		}
	}
	closeTestWAL(t, wal, meta)

	segments, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil {
		t.Fatal(err)
	}
	if atLeast := entries * entryBytes / raftWALSegmentBytes; len(segments) < atLeast {
		t.Fatalf("%d segment files for %d MiB of entries, want at least %d", len(segments), entries*entryBytes>>20, atLeast)
	}
	for _, s := range segments {
		fi, err := os.Stat(s)
		if err != nil {
			t.Fatal(err)
		}
		// A segment is sealed after the batch that fills it: one entry over.
		if fi.Size() > raftWALSegmentBytes+2*entryBytes {
			t.Errorf("segment %s holds %d bytes, want at most about %d", filepath.Base(s), fi.Size(), raftWALSegmentBytes)
		}
	}

	wal, meta = openTestWAL(t, dir)
	defer closeTestWAL(t, wal, meta)
	for i := uint64(1); i <= entries; i++ {
		var l raft.Log
		if err := wal.GetLog(i, &l); err != nil {
			t.Fatalf("GetLog(%d) after reopening: %v", i, err)
		}
		if !bytes.Equal(l.Data, payload(i)) {
			t.Fatalf("entry %d after reopening: %d bytes differ from the %d written", i, len(l.Data), entryBytes)
		}
	}
}
