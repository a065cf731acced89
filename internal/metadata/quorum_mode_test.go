package metadata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/clock"
)

// Raft state made by a single node cannot be opened as a cluster member,
// nor a member's as a single node: either would split the quorum or hang.
func TestQuorumModeCannotChange(t *testing.T) {
	single := t.TempDir()
	s, err := Open(t.Context(), Options{Dir: single, NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	addr := freeAddrs(t, 1)[0]
	voters := map[int32]string{1: addr}
	_, err = Open(t.Context(), Options{Dir: single, NodeID: 1, Clock: clock.Real{}, BindAddr: addr, Voters: voters})
	if err == nil || !strings.Contains(err.Error(), "single-node broker") {
		t.Fatalf("single-node state opened as a cluster member: %v", err)
	}

	// State from before the mode file existed counts as a single node's.
	if err := os.Remove(filepath.Join(single, quorumModeFile)); err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), Options{Dir: single, NodeID: 1, Clock: clock.Real{}, BindAddr: addr, Voters: voters})
	if err == nil || !strings.Contains(err.Error(), "single-node broker") {
		t.Fatalf("legacy single-node state opened as a cluster member: %v", err)
	}
	s, err = Open(t.Context(), Options{Dir: single, NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatalf("legacy single-node state does not reopen as a single node: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	member := t.TempDir()
	s, err = Open(t.Context(), Options{Dir: member, NodeID: 1, Clock: clock.Real{}, BindAddr: addr, Voters: map[int32]string{1: addr}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), Options{Dir: member, NodeID: 1, Clock: clock.Real{}})
	if err == nil || !strings.Contains(err.Error(), "controller.quorum.voters") {
		t.Fatalf("a member's state opened as a single node: %v", err)
	}
}
