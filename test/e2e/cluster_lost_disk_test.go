package e2e

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterNodeLosesItsDisk: a node (a voter of the metadata quorum and a
// replica of every partition) is killed and its data directory emptied, as
// a replaced disk leaves it, while an acks=all producer writes. Started
// again, it must not vote with what it forgot: it catches up with the
// metadata quorum without a vote, then votes again, and its replicas fetch
// everything back and rejoin every ISR. Then, with another node killed, the
// two left (the wiped one among them) are a quorum and an ISR: writing goes
// on, and every acknowledged record is there once, in order.
func TestClusterNodeLosesItsDisk(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic, partitions = "lost-disk", 3
	c.createTopic(adm, topic, partitions, 3, nil)
	c.waitISR(adm, topic, 3)

	p := startAckedProducer(t, c.newClient(ackedProducerOpts...), topic, partitions)
	p.waitTotalAcked(t, 300)
	victim := c.Node(3)
	victim.Kill()
	victim.emptyDataDir()
	acked := p.totalAcked()
	t.Logf("killed node 3 and emptied %s with %d records acknowledged", victim.Dir, acked)
	p.waitTotalAcked(t, acked+300)

	victim.Restart()
	c.waitBrokers(1, 2, 3)
	c.waitISR(adm, topic, 3)
	// Every node a voter again, none an observer.
	c.requireQuorumDescribed(1)
	waitOutput(t, "node 3", victim.output.String, "catches up without a vote", "rejoined the metadata quorum as a voter")

	acked = p.totalAcked()
	c.Node(1).Kill()
	t.Logf("killed node 1 with %d records acknowledged", acked)
	p.waitTotalAcked(t, acked+300)
	p.stop(t)
	p.check(t, consumeAll(t, victim.Addr, topic))
}

// TestClusterLostLogNotElected: the only replica of a partition (so its
// last in-sync one) comes back with an emptied data directory. Before, the
// controller elected it as soon as it was unfenced, and the partition
// started over empty with nobody told. Now the partition has no leader and
// the broker says why, until an operator accepts the loss with an UNCLEAN
// election; the partition then starts over on purpose.
func TestClusterLostLogNotElected(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic = "lost-log"
	c.createTopic(adm, topic, 1, 1, map[string]*string{"min.insync.replicas": kadm.StringPtr("1")})
	owner := c.waitISR(adm, topic, 1)[0].Leader
	cl := c.newClient(kgo.RequiredAcks(kgo.AllISRAcks()))
	records := make([]*kgo.Record, 20)
	for i := range records {
		records[i] = &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "before-%d", i)}
	}
	produceSync(t, cl, records...)

	b := c.Node(owner)
	b.Kill()
	b.emptyDataDir()
	b.Restart()
	c.waitBrokers(c.ids()...)
	if st := c.waitLeaderless(adm, topic); len(st.ISR) != 0 {
		t.Fatalf("after node %d came back without its logs: %v, want no leader and an empty ISR", owner, st)
	}
	time.Sleep(time.Second) // unfenced, and still not elected
	if st, _ := partitions(t, adm, topic); st[0].Leader >= 1 {
		t.Fatalf("node %d leads again with an empty log: %v", owner, st[0])
	}
	waitOutput(t, fmt.Sprintf("node %d", owner), b.output.String, "partitions without an in-sync replica")

	results, err := adm.ElectLeaders(testContext(t, 30*time.Second), kadm.ElectLiveReplica, kadm.TopicsSet{topic: {0: {}}})
	if err != nil || results[topic][0].Err != nil {
		t.Fatalf("unclean election: %v %+v", err, results)
	}
	c.waitISR(adm, topic, 1)
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: []byte("after")})
	if got := recordValues(consumeAll(t, b.Addr, topic)[0]); !slices.Equal(got, []string{"after"}) {
		t.Fatalf("after the unclean election: %v, want only the record written since", got)
	}
}

// emptyDataDir leaves the stopped broker's data directory as a replaced
// disk would: there, and empty.
func (b *Broker) emptyDataDir() {
	b.t.Helper()
	if err := os.RemoveAll(b.Dir); err != nil {
		b.t.Fatal(err)
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
}
