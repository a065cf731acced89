package metadata

import (
	"fmt"
	"testing"
)

// TestClusterRestartedMemberOpensCaughtUp: a member restarted with its
// Raft state returns from Open only once its image holds everything the
// controller had committed before it: the broker behind it removes the
// partition directories of topics its first image does not hold, so an
// image behind what the node had applied before its restart would cost it
// the logs of every topic created since the leader took office.
func TestClusterRestartedMemberOpensCaughtUp(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	c.openAll(1, 2, 3)
	leader := c.leader()
	for i := range 300 {
		if _, err := leader.CreateTopic(t.Context(), CreateTopic{Name: fmt.Sprintf("t%d", i), Partitions: 1, ReplicationFactor: 1}); err != nil {
			t.Fatal(err)
		}
	}
	want := leader.Image()
	c.converge(want)
	for round := range 3 {
		f := c.follower(leader)
		id := f.opts.NodeID
		c.close(f)
		back := c.openAll(id)[0]
		if img := back.Image(); img.Version < want.Version || len(img.Topics) != len(want.Topics) {
			t.Fatalf("round %d: node %d opened at version %d with %d topics; the controller had committed version %d with %d",
				round, id, img.Version, len(img.Topics), want.Version, len(want.Topics))
		}
	}
}
