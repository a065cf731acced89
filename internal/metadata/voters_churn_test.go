package metadata

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestClusterVoterChangesUnderRestarts runs a seeded sequence of voter
// changes, restarts and lost disks (of the leader too) on five nodes at fixed
// addresses: three configured voters and two nodes outside them. At least
// three voters remain, so one node down never costs the quorum. After each
// step a proposal through a node that does not lead commits, every open
// node converges on the same image, and the voters are those the steps
// made.
func TestClusterVoterChangesUnderRestarts(t *testing.T) {
	c := newTestCluster(t, 3, 2)
	for i, addr := range freeAddrs(t, 2) {
		o := c.opts[int32(i+4)]
		o.BindAddr = addr
		c.opts[int32(i+4)] = o
	}
	for id, o := range c.opts {
		o.DirectoryID = [16]byte{byte(id)}
		c.opts[id] = o
	}
	for _, s := range c.openAll(1, 2, 3, 4, 5) {
		registerWithDir(t, s)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	voters := map[int32]bool{1: true, 2: true, 3: true}
	node := func(id int32) *Store {
		for _, s := range c.open() {
			if s.opts.NodeID == id {
				return s
			}
		}
		t.Fatalf("node %d is not open", id)
		return nil
	}
	for step := range 8 {
		leader := c.leader()
		var others []int32
		for id := int32(1); id <= 5; id++ {
			if !voters[id] {
				others = append(others, id)
			}
		}
		switch op := rng.IntN(4); {
		case op == 0 && len(others) > 0:
			id := others[rng.IntN(len(others))]
			t.Logf("step %d: add voter %d", step, id)
			addVoter(t, c.follower(leader), node(id))
			voters[id] = true
		case op == 1 && len(voters) > 3:
			ids := slices.Sorted(maps.Keys(voters))
			id := ids[rng.IntN(len(ids))]
			t.Logf("step %d: remove voter %d", step, id)
			if err := c.follower(leader).RemoveVoter(t.Context(), id, [16]byte{byte(id)}, 10*time.Second); err != nil {
				t.Fatalf("RemoveVoter(%d): %v", id, err)
			}
			delete(voters, id)
		case op == 2:
			id := int32(rng.IntN(5) + 1)
			t.Logf("step %d: node %d loses its disk (leader %d)", step, id, leader.opts.NodeID)
			c.close(node(id))
			c.wipe(id)
			back := c.openAll(id)[0]
			registerWithDir(t, back)
			waitFor(t, "the wiped node to catch up", func() bool { return !back.VoteWithheld() })
		default:
			id := int32(rng.IntN(5) + 1)
			t.Logf("step %d: restart node %d (leader %d)", step, id, leader.opts.NodeID)
			c.close(node(id))
			registerWithDir(t, c.openAll(id)[0])
		}
		leader = c.leader()
		if _, err := c.follower(leader).CreateTopic(t.Context(), CreateTopic{Name: fmt.Sprintf("step-%d", step), Partitions: 1, ReplicationFactor: 1}); err != nil {
			t.Fatalf("step %d: CreateTopic: %v", step, err)
		}
		c.converge(leader.Image())
		got := map[int32]bool{}
		for id, srv := range configuration(t, leader) {
			if srv.Suffrage == raft.Voter {
				got[id] = true
			}
		}
		if !maps.Equal(got, voters) {
			t.Fatalf("step %d: voters %v, want %v", step, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(voters)))
		}
	}
}
