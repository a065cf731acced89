package metadata

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// wipe removes everything node id keeps, as a replaced disk would.
func (c *testCluster) wipe(id int32) {
	c.t.Helper()
	dir := c.opts[id].Dir
	if err := os.RemoveAll(dir); err != nil {
		c.t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
}

// waitRejoined waits until s, a voter in leader's configuration all
// along, has opened its vote gate and removed its marker.
func waitRejoined(t *testing.T, leader, s *Store) {
	t.Helper()
	id := s.opts.NodeID
	waitFor(t, "the wiped voter to vote again", func() bool {
		gate, _ := s.trans.(*voteGate)
		marked, err := rejoining(s.opts.Dir)
		return err == nil && !marked && gate != nil && gate.IsOpen() &&
			configuration(t, leader)[id].Suffrage == raft.Voter
	})
}

// TestClusterVoterRejoinsAfterLosingItsState: a voter whose metadata dir was
// wiped comes back without a vote, catches up, votes again, and its vote
// then counts: with the leader gone, it and the third voter elect.
func TestClusterVoterRejoinsAfterLosingItsState(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	leader := c.leader()
	want := populate(t, leader, "w")
	c.converge(want)

	wiped := c.follower(leader)
	id := wiped.opts.NodeID
	c.close(wiped)
	c.wipe(id)
	back := c.openAll(id)[0]
	if _, ok := back.trans.(*voteGate); !ok {
		t.Fatal("the wiped voter did not start rejoining")
	}
	waitRejoined(t, leader, back)
	if back.VoteWithheld() || leader.VoteWithheld() {
		t.Fatalf("votes withheld after the rejoin: wiped voter %v, leader %v", back.VoteWithheld(), leader.VoteWithheld())
	}
	c.converge(want)

	c.close(leader)
	next := c.leader()
	if _, err := back.CreateTopic(t.Context(), CreateTopic{Name: "after-rejoin", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatalf("CreateTopic with the rejoined voter in a quorum of two: %v", err)
	}
	c.converge(next.Image())
}

// TestClusterWipedVoterDoesNotElectAStaleLeader is the case Raft cannot
// survive when a voter forgets: a topic committed by voters 1 and 3 while
// 2 was down; 3 loses its disk and 1 stops. Voter 2, which never saw the
// topic, must not be elected by the wiped 3 (whose empty log any candidate
// beats): the quorum waits for 1, and the topic survives.
func TestClusterWipedVoterDoesNotElectAStaleLeader(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	stores := c.openAll(1, 2, 3)
	c.leader()
	c.close(stores[1]) // voter 2
	leader := c.leader()
	if _, err := leader.CreateTopic(t.Context(), CreateTopic{Name: "seen-by-1-and-3", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	c.converge(leader.Image())
	c.close(stores[2]) // voter 3
	c.wipe(3)
	c.close(stores[0]) // voter 1

	opened := make(chan []*Store, 1)
	go func() { opened <- c.openAll(2, 3) }()
	select {
	case <-opened:
		t.Fatal("voters 2 and 3 formed a quorum without voter 1: the wiped voter's vote counted")
	case <-time.After(5 * time.Second): // several election timeouts
	}
	if _, err := os.Stat(filepath.Join(c.opts[3].Dir, rejoinMarkerFile)); err != nil {
		t.Fatalf("the wiped voter is not rejoining: %v", err)
	}
	c.openAll(1)
	<-opened
	leader = c.leader()
	if leader.opts.NodeID == 3 {
		t.Fatal("the wiped voter leads")
	}
	c.converge(leader.Image())
	if _, ok := leader.Image().Topics["seen-by-1-and-3"]; !ok {
		t.Fatal("the topic committed before voter 3 lost its disk is gone")
	}
	for _, s := range c.open() {
		if s.opts.NodeID == 3 {
			waitRejoined(t, leader, s)
		}
	}
}
