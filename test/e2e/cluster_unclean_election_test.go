package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterUncleanElection is what an operator does when a partition's
// last in-sync replica is gone: `kafka-leader-election --election-type
// UNCLEAN`. Five nodes (so that the metadata quorum outlives two of them);
// a partition with two replicas and min.insync.replicas 1. Its follower is
// killed, so the leader alone acknowledges the next records; then the
// leader is killed and the follower restarted: the partition has no leader
// (the follower is outside the ISR) until the unclean election makes the
// follower its leader and only ISR member. The records only the old leader
// held are lost, as the operator accepted; everything else is there, and
// the old leader, restarted, truncates to the new leader's log, rejoins the
// ISR and, leading again, serves the same records.
func TestClusterUncleanElection(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 5)
	adm := c.newAdmin()
	const topic = "unclean"
	c.createTopic(adm, topic, 1, 2, map[string]*string{"min.insync.replicas": kadm.StringPtr("1")})
	st := c.waitPreferredLeaders(adm, topic, 2)[0]
	leader := st.Leader
	follower := st.Replicas[1]
	cl := c.newClient(kgo.RequiredAcks(kgo.AllISRAcks()))
	produceNamed := func(prefix string, n int) {
		t.Helper()
		records := make([]*kgo.Record, n)
		for i := range records {
			records[i] = &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
		}
		produceSync(t, cl, records...)
	}
	produceNamed("before", 50)

	c.Node(follower).Kill()
	c.waitISR(adm, topic, 1)
	produceNamed("lost", 50) // acknowledged by the leader alone
	c.Node(leader).Kill()
	c.Node(follower).Restart()
	c.waitBrokers(liveIDs(c, leader)...)
	st = c.waitLeaderless(adm, topic)
	if !slices.Equal(st.ISR, []int32{leader}) {
		t.Fatalf("before the election: %v, want the dead leader %d alone in the ISR", st, leader)
	}
	time.Sleep(time.Second) // the restarted follower is unfenced, and still no leader
	if st, _ := partitions(t, adm, topic); st[0].Leader >= 1 {
		t.Fatalf("the partition got leader %d without an unclean election", st[0].Leader)
	}

	results, err := adm.ElectLeaders(testContext(t, 30*time.Second), kadm.ElectLiveReplica, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := results[topic][0]; r.Err != nil {
		t.Fatalf("unclean election: %v %s", r.Err, r.ErrMessage)
	}
	st = c.waitPartitions(adm, topic, "the follower leading", func(p partitionState) bool { return p.Leader == follower })[0]
	if !slices.Equal(st.ISR, []int32{follower}) {
		t.Fatalf("after the election: %v, want %d alone in the ISR", st, follower)
	}
	again, err := adm.ElectLeaders(testContext(t, 30*time.Second), kadm.ElectLiveReplica, kadm.TopicsSet{topic: {0: {}}})
	if err != nil || again[topic][0].Err == nil {
		t.Fatalf("electing again: %v %+v, want ELECTION_NOT_NEEDED", err, again)
	}
	produceNamed("after", 50)

	want := append(names("before", 50), names("after", 50)...)
	if got := recordValues(consumeAll(t, c.Node(follower).Addr, topic)[0]); !slices.Equal(got, want) {
		t.Fatalf("read from the new leader %d: %v, want %v", follower, got, want)
	}
	c.Node(leader).Restart()
	c.waitBrokers(c.ids()...)
	c.waitISR(adm, topic, 2)
	c.electPreferredLeaders(adm, topic, 2)
	if got := recordValues(consumeAll(t, c.Node(leader).Addr, topic)[0]); !slices.Equal(got, want) {
		t.Fatalf("read from the old leader %d, leading again: %v, want %v", leader, got, want)
	}
}

// waitLeaderless waits until Metadata shows partition 0 of topic without
// a leader (LEADER_NOT_AVAILABLE) and returns what it shows.
func (c *Cluster) waitLeaderless(adm *kadm.Client, topic string) partitionState {
	c.t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		parts, err := partitions(c.t, adm, topic)
		if p, ok := parts[0]; err == nil && ok && p.Leader < 1 {
			return p
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s/0 still has a leader after %v: %v (error %v)", topic, clusterSettleTimeout, parts, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// liveIDs is every node id of c but those in down.
func liveIDs(c *Cluster, down ...int32) []int32 {
	return slices.DeleteFunc(c.ids(), func(id int32) bool { return slices.Contains(down, id) })
}

// names is prefix-0 .. prefix-(n-1).
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// recordValues is the values of records, in order.
func recordValues(records []*kgo.Record) []string {
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = string(r.Value)
	}
	return out
}
