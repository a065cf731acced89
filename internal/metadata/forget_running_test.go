package metadata

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestClusterRunningNodeTakenOutJoinsBack: a broker fenced while its node
// keeps running (here: it stopped heartbeating) can be unregistered, which
// takes its non-voter out of the Raft configuration; the node, still up,
// must notice that the leader no longer replicates to it and join again,
// or its image stays behind for good.
func TestClusterRunningNodeTakenOutJoinsBack(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	c.setSessionTimeout(1500 * time.Millisecond)
	stores := c.openAll(1, 2, 3, 4)
	n4 := stores[3]
	b, err := n4.RegisterBroker(t.Context(), BrokerRegistration{ID: 4, Incarnation: [16]byte{1},
		LogDir: [16]byte{4}, Endpoints: endpoint(19004)})
	if err != nil {
		t.Fatal(err)
	}
	stopBeat := beat(t, n4, b, 20*time.Millisecond)
	leader := c.leader()
	waitFor(t, "broker 4 unfenced", func() bool {
		r, ok := leader.Image().Brokers[4]
		return ok && !r.Fenced
	})
	stopBeat()
	waitFor(t, "broker 4 fenced", func() bool {
		r, ok := leader.Image().Brokers[4]
		return ok && r.Fenced
	})
	if err := leader.UnregisterBroker(t.Context(), 4); err != nil {
		t.Fatal(err)
	}
	if srv, ok := configuration(t, leader)[4]; ok {
		t.Fatalf("the unregistered node is still in the configuration: %+v", srv)
	}
	want := populate(t, leader, "after")
	c.converge(want)
	if srv := configuration(t, leader)[4]; srv.Suffrage != raft.Nonvoter || srv.Address != n4.trans.LocalAddr() {
		t.Fatalf("node 4 in the configuration as %+v, want a non-voter at %s", srv, n4.trans.LocalAddr())
	}
}
