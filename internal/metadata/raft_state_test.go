package metadata

import (
	"os"
	"path/filepath"
	"testing"
)

// A directory has Raft state once a quorum bootstrapped there, and not
// before, even when Open was interrupted after making it.
func TestHasRaftState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "meta")
	if has, err := HasRaftState(dir); has || err != nil {
		t.Fatalf("no directory: %v, %v", has, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "wal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if has, err := HasRaftState(dir); has || err != nil {
		t.Fatalf("an empty directory: %v, %v", has, err)
	}
	s := openStore(t, testOptions(t, dir, ""))
	closeStore(t, s)
	if has, err := HasRaftState(dir); !has || err != nil {
		t.Fatalf("after a quorum bootstrapped: %v, %v", has, err)
	}
	// The check leaves the store openable.
	closeStore(t, openStore(t, testOptions(t, dir, "")))
}
