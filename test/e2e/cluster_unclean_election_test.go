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
	u := loseTheISR(t)
	c, adm, topic, leader, follower := u.c, u.adm, u.topic, u.leader, u.follower
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
	u.requireFollowerLeads()
	again, err := adm.ElectLeaders(testContext(t, 30*time.Second), kadm.ElectLiveReplica, kadm.TopicsSet{topic: {0: {}}})
	if err != nil || again[topic][0].Err == nil {
		t.Fatalf("electing again: %v %+v, want ELECTION_NOT_NEEDED", err, again)
	}
	u.produce("after", 50)

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

// TestClusterUncleanElectionByTopicConfig is the same loss of the ISR on a
// topic whose owner then turns unclean.leader.election.enable on: the
// controller elects the live follower on its own, as Kafka's does, and
// the partition takes writes again; what only the old leader held is
// gone, everything before it is there.
func TestClusterUncleanElectionByTopicConfig(t *testing.T) {
	t.Parallel()
	u := loseTheISR(t)
	resps, err := u.adm.AlterTopicConfigs(testContext(t, 15*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "unclean.leader.election.enable", Value: kadm.StringPtr("true")},
	}, u.topic)
	if err != nil || resps[0].Err != nil {
		t.Fatalf("turning unclean.leader.election.enable on: %v %+v", err, resps)
	}
	u.requireFollowerLeads()
	u.produce("after", 50)
	want := append(names("before", 50), names("after", 50)...)
	if got := recordValues(consumeAll(t, u.c.Node(u.follower).Addr, u.topic)[0]); !slices.Equal(got, want) {
		t.Fatalf("read from the new leader %d: %v, want %v", u.follower, got, want)
	}
}

// lostISR is a partition (topic's 0, two replicas, min.insync.replicas 1)
// whose follower was killed, so that the leader alone acknowledged the
// records named lost-N after those named before-N; then the leader was
// killed and the follower restarted: the partition has no leader, its ISR
// the dead leader alone. Five nodes, so that the metadata quorum outlives
// two of them.
type lostISR struct {
	t                *testing.T
	c                *Cluster
	adm              *kadm.Client
	cl               *kgo.Client
	topic            string
	leader, follower int32
}

func loseTheISR(t *testing.T) *lostISR {
	t.Helper()
	c := startCluster(t, 5)
	u := &lostISR{t: t, c: c, adm: c.newAdmin(), cl: c.newClient(kgo.RequiredAcks(kgo.AllISRAcks())), topic: "unclean"}
	c.createTopic(u.adm, u.topic, 1, 2, map[string]*string{"min.insync.replicas": kadm.StringPtr("1")})
	st := c.waitPreferredLeaders(u.adm, u.topic, 2)[0]
	u.leader, u.follower = st.Leader, st.Replicas[1]
	u.produce("before", 50)

	c.Node(u.follower).Kill()
	c.waitISR(u.adm, u.topic, 1)
	u.produce("lost", 50) // acknowledged by the leader alone
	c.Node(u.leader).Kill()
	c.Node(u.follower).Restart()
	c.waitBrokers(liveIDs(c, u.leader)...)
	st = c.waitLeaderless(u.adm, u.topic)
	if !slices.Equal(st.ISR, []int32{u.leader}) {
		t.Fatalf("before the election: %v, want the dead leader %d alone in the ISR", st, u.leader)
	}
	return u
}

// produce writes n records named prefix-0 .. prefix-(n-1), acks=all.
func (u *lostISR) produce(prefix string, n int) {
	u.t.Helper()
	records := make([]*kgo.Record, n)
	for i := range records {
		records[i] = &kgo.Record{Topic: u.topic, Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	produceSync(u.t, u.cl, records...)
}

// requireFollowerLeads waits until the follower leads, the only member of
// the ISR.
func (u *lostISR) requireFollowerLeads() {
	u.t.Helper()
	st := u.c.waitPartitions(u.adm, u.topic, "the follower leading", func(p partitionState) bool { return p.Leader == u.follower })[0]
	if !slices.Equal(st.ISR, []int32{u.follower}) {
		u.t.Fatalf("after the election: %v, want %d alone in the ISR", st, u.follower)
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
