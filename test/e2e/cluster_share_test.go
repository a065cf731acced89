package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterShareGroup: share consumers of one group on a three-node
// cluster, where a partition's leader, the group's coordinator and each
// share-partition's share coordinator are spread over the nodes (so that
// leaders persist their delivery state through other brokers): they split
// a topic's records, each delivered once. A node is then killed with
// SIGKILL; the group's new members, against the two left, get every record
// produced since and none of those accepted before: the accepted state
// lives in the replicated __share_group_state and moved with its leaders.
func TestClusterShareGroup(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, "offsets.topic.num.partitions=3",
		"share.coordinator.state.topic.num.partitions=3", "share.coordinator.state.topic.replication.factor=3",
		"share.coordinator.state.topic.min.isr=2")
	adm := c.newAdmin()
	minISR := map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}
	c.createTopic(adm, "cluster-queue", 3, 3, minISR)
	c.waitISR(adm, "cluster-queue", 3)
	seeds := kgo.SeedBrokers(c.Addrs()...)
	shareEarliest(t, c.Nodes[0].Addr, "cluster-workers")
	prod := c.newClient(kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produceN(t, prod, "cluster-queue", 300)

	first := newShareRecords()
	stopA := startShareConsumer(t, c.Nodes[0].Addr, "cluster-workers", "cluster-queue", first, seeds)
	stopB := startShareConsumer(t, c.Nodes[1].Addr, "cluster-workers", "cluster-queue", first, seeds)
	waitShare(t, first, 300, 60*time.Second)
	stopA()
	stopB()
	if d := first.duplicates(); len(d) > 0 {
		t.Fatalf("records delivered more than once while every one was accepted: %v", d)
	}

	c.Nodes[2].Kill()
	c.waitBrokers(1, 2)
	produceN(t, prod, "cluster-queue", 150)
	second := newShareRecords()
	startShareConsumer(t, c.Nodes[0].Addr, "cluster-workers", "cluster-queue", second, seeds)
	startShareConsumer(t, c.Nodes[1].Addr, "cluster-workers", "cluster-queue", second, seeds)
	waitShare(t, second, 150, 60*time.Second)
	time.Sleep(time.Second)
	if n := second.distinct(); n != 150 {
		t.Fatalf("after the kill the group got %d records; want the 150 produced since its members accepted the first 300", n)
	}
}
