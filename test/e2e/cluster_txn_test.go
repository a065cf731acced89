package e2e

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterTransactions runs transactions on a three-node cluster, where
// the transactional id's coordinator leads one __transaction_state
// partition and the topic's partitions are led across the nodes: the
// markers reach partitions led by other brokers (WriteTxnMarkers), and
// their leaders verify each transaction's first produce with the
// coordinator's broker (AddPartitionsToTxn v4). A read_committed reader
// sees the committed transactions only; a transactional offset commit to
// a group is visible once committed. Then the coordinator's node is killed
// and a new producer with the same id fences the old one and commits
// through the new coordinator.
func TestClusterTransactions(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic, partitions = "cluster-txn", 3
	c.createTopic(adm, topic, partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")})
	leaders := map[int32]bool{}
	for _, s := range c.waitISR(adm, topic, 3) {
		leaders[s.Leader] = true
	}
	if len(leaders) < 2 {
		t.Fatalf("the partitions are all led by one node (%v): the test would not cross brokers", leaders)
	}

	const txnID = "cluster-txn-producer"
	producer := c.newClient(kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	committed1 := txnRecords(topic, "c1", partitions, 5)
	inTxn(t, producer, true, committed1...)
	inTxn(t, producer, false, txnRecords(topic, "aborted", partitions, 5)...)
	committed2 := txnRecords(topic, "c2", partitions, 5)
	inTxn(t, producer, true, committed2...)

	// The coordinator's node dies; a new producer with the same id finds
	// the new coordinator, fences the old producer and commits.
	found := adm.FindTxnCoordinators(testContext(t, clientDeliveryTimeout), txnID)[txnID]
	if found.Err != nil {
		t.Fatalf("finding the transaction coordinator: %v", found.Err)
	}
	coordinator := found.NodeID
	producer.Close()
	c.Node(coordinator).Kill()
	t.Logf("killed node %d, the coordinator of %q", coordinator, txnID)
	var alive string
	for _, b := range c.Nodes {
		if b.running() {
			alive = b.Addr
		}
	}
	successor := newClient(t, alive, kgo.SeedBrokers(alive), kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	committed3 := txnRecords(topic, "c3", partitions, 5)
	inTxn(t, successor, true, committed3...)

	writeSentinels(t, alive, topic, partitions)
	requirePartitionValues(t, "read_committed", readToSentinels(t, alive, topic, partitions, kgo.ReadCommitted()),
		valuesByPartition(committed1, committed2, committed3))
}
