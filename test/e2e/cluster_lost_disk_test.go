package e2e

import (
	"os"
	"strings"
	"testing"
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
	if err := os.RemoveAll(victim.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(victim.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	acked := p.totalAcked()
	t.Logf("killed node 3 and emptied %s with %d records acknowledged", victim.Dir, acked)
	p.waitTotalAcked(t, acked+300)

	victim.Restart()
	c.waitBrokers(1, 2, 3)
	c.waitISR(adm, topic, 3)
	// Every node a voter again, none an observer.
	c.requireQuorumDescribed(1)
	if out := victim.output.String(); !strings.Contains(out, "catches up without a vote") || !strings.Contains(out, "rejoined the metadata quorum as a voter") {
		t.Fatal("node 3 did not say that it rejoined the metadata quorum")
	}

	acked = p.totalAcked()
	c.Node(1).Kill()
	t.Logf("killed node 1 with %d records acknowledged", acked)
	p.waitTotalAcked(t, acked+300)
	p.stop(t)
	p.check(t, consumeAll(t, victim.Addr, topic))
}
