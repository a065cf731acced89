package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterEveryAdvertisedVersionAnswers is the version sweep against a
// node of a three-node cluster that is not the controller, so that every
// request the controller serves (topics, partitions, configs, the quorum,
// elections, reassignments, producer ids) is forwarded to it, at every
// version. The sweep's topics live on that node alone; the group APIs go to
// the group's coordinator, wherever it is.
func TestClusterEveryAdvertisedVersionAnswers(t *testing.T) {
	t.Parallel()
	// The sweep's topics have one replica: acks=all needs no other.
	c := startCluster(t, 3, "min.insync.replicas=1")
	adm := c.newAdmin()
	ask := int32(0)
	for _, id := range c.ids() {
		if id != quorumLeader(t, c) {
			ask = id
			break
		}
	}
	cl := c.newClient()
	for _, topic := range sweepTopics {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 10_000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Replicas = []int32{ask}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(testContext(t, 15*time.Second), cl)
		if err != nil || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("creating %s on node %d: %v %+v", topic, ask, err, resp)
		}
		requirePartitionCount(t, adm, topic, 1)
	}
	s := prepareSweep(t, adm, cl, &sweepState{nodes: len(c.Nodes), addr: c.Node(ask).Addr})
	coordinators := adm.FindGroupCoordinators(testContext(t, 10*time.Second), sweepGroup)
	g, ok := coordinators[sweepGroup]
	if !ok || g.Err != nil {
		t.Fatalf("finding the coordinator of %s: %+v", sweepGroup, coordinators)
	}
	s.groupAddr = c.Node(g.NodeID).Addr
	t.Logf("asking node %d (not the controller); group coordinator node %d", ask, g.NodeID)
	runSweep(t, s)
}

// quorumLeader is the metadata quorum's leader, the controller, as
// DescribeQuorum tells.
func quorumLeader(t *testing.T, c *Cluster) int32 {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t, 10*time.Second), c.newClient())
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("DescribeQuorum: %v %+v", err, resp)
	}
	return resp.Topics[0].Partitions[0].LeaderID
}
