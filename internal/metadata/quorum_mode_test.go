package metadata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/clock"
)

// Raft state made by a single node cannot be opened as a member of a
// quorum with other voters, nor a member's as a single node: either would
// split the quorum or hang.
func TestQuorumModeCannotChange(t *testing.T) {
	single := t.TempDir()
	s, err := Open(t.Context(), Options{Dir: single, NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	addrs := freeAddrs(t, 2)
	addr := addrs[0]
	voters := map[int32]string{1: addr, 2: addrs[1]}
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

// TestSingleNodeGrowsIntoACluster: a single node's state, opened with
// Voters naming only itself, becomes a cluster's one voter at its TCP
// address (no longer the in-memory one), with everything it held; another
// node joins it and AddVoter makes that one a voter. It cannot go back.
func TestSingleNodeGrowsIntoACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("a TCP quorum uses Raft's default (second-scale) election timeouts")
	}
	dir := t.TempDir()
	s, err := Open(t.Context(), Options{Dir: dir, NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	want := populate(t, s, "alone")
	closeStore(t, s)

	c := newTestCluster(t, 1, 1)
	o := c.opts[1]
	o.Dir = dir
	c.opts[1] = o
	first := c.openAll(1)[0]
	if conf := configuration(t, first); conf[1].Address != first.trans.LocalAddr() || conf[1].Suffrage != raft.Voter {
		t.Fatalf("configuration %+v, want voter 1 at %s", conf, first.trans.LocalAddr())
	}
	for name := range want.Topics {
		if _, ok := first.Image().Topics[name]; !ok {
			t.Fatalf("topic %s lost in the move to a cluster", name)
		}
	}
	second := c.openAll(2)[0]
	registerWithDir(t, first)
	registerWithDir(t, second)
	addVoter(t, second, second)
	if conf := configuration(t, first); conf[2].Suffrage != raft.Voter {
		t.Fatalf("configuration %+v, want node 2 a voter", conf)
	}
	c.converge(first.Image())

	c.close(first)
	c.close(second)
	if _, err := Open(t.Context(), Options{Dir: dir, NodeID: 1, Clock: clock.Real{}}); err == nil || !strings.Contains(err.Error(), "controller.quorum.voters") {
		t.Fatalf("the grown node's state opened as a single node: %v", err)
	}
}
