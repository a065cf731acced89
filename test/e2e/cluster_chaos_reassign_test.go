package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestClusterChaosReassign is TestClusterChaos's faults while partitions
// move: before each fault, a partition of a topic with replication factor
// 2 is reassigned to a random pair of nodes (KIP-455), so faults land on
// reassignments in flight, replicas catching up and replicas being
// removed. After each round the test waits until no reassignment is in
// flight and every replica is in sync. Then every acknowledged record is
// there once, in ack order; with every node stopped, each partition's
// replicas hold the same batches, and a node that is no longer a replica
// holds no copy of the partition.
func TestClusterChaosReassign(t *testing.T) {
	t.Parallel()
	rounds, rng := chaosSeed(t)
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic, partitions = "chaos-moving", 3
	c.createTopic(adm, topic, partitions, 2, map[string]*string{"min.insync.replicas": kadm.StringPtr("1")})
	c.waitAllInSync(adm, topic)

	p := startAckedProducerUpTo(t, c.newClient(ackedProducerOpts...), topic, partitions, ackedProducerMaxRecords+2000*rounds)
	p.waitTotalAcked(t, 100)
	c.runChaos(t, rng, rounds, func() string {
		part, to := drawReassignment(rng, partitions, int32(len(c.Nodes)))
		var req kadm.AlterPartitionAssignmentsReq
		req.Assign(topic, part, to)
		resp, err := adm.AlterPartitionAssignments(testContext(t, 10*time.Second), req)
		if err == nil {
			err = resp.Error()
		}
		return fmt.Sprintf("%d records acknowledged, %s/%d moving to %v (%v)", p.totalAcked(), topic, part, to, err)
	}, func() {
		c.waitReassignmentsDone(adm, topic)
		c.waitAllInSync(adm, topic)
		p.waitTotalAcked(t, p.totalAcked()+100)
	})
	p.stop(t)
	p.check(t, consumeAll(t, c.Node(1).Addr, topic))

	adm = c.newAdmin()
	ends := make(map[int32]int64)
	for part := range int32(partitions) {
		ends[part] = listedOffsetOf(t, adm, topic, part, false)
	}
	final := c.waitAllInSync(adm, topic)
	time.Sleep(time.Second)
	c.stopAll()
	for part, s := range final {
		dir := fmt.Sprintf("%s-%d", topic, part)
		checkReplicasAgree(t, c, dir, ends[part], s.Replicas)
		for _, id := range without(c.ids(), s.Replicas...) {
			if _, err := os.Stat(filepath.Join(c.Node(id).Dir, dir)); err == nil {
				t.Errorf("node %d, no longer a replica of %s (replicas %v), still holds its directory", id, dir, s.Replicas)
			}
		}
	}
}

// drawReassignment picks a partition and an ordered pair of distinct
// nodes to move it to.
func drawReassignment(rng *rand.Rand, partitions, nodes int32) (int32, []int32) {
	first := 1 + rng.Int32N(nodes)
	second := 1 + (first+rng.Int32N(nodes-1))%nodes
	return rng.Int32N(partitions), []int32{first, second}
}

// waitReassignmentsDone waits until no partition of topic is being
// reassigned (ListPartitionReassignments lists none).
func (c *Cluster) waitReassignmentsDone(adm *kadm.Client, topic string) {
	c.t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		listed, err := adm.ListPartitionReassignments(testContext(c.t, 10*time.Second), nil)
		if err == nil && len(listed.Sorted()) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("reassignments of %q still in flight after %v: %v (%v)", topic, clusterSettleTimeout, listed.Sorted(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
