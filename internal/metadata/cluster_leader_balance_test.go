package metadata

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// brokersCluster opens a three-node quorum (each node with edit applied to
// its options), registers and unfences each node's broker through a
// follower, and creates topic "spread" of six partitions on all three, two
// preferring each broker. It returns the stores and broker epochs.
func brokersCluster(t *testing.T, edit func(*Options)) (*testCluster, map[int32]int64) {
	t.Helper()
	c := newTestCluster(t, 3, 0)
	for id, o := range c.opts {
		edit(&o)
		c.opts[id] = o
	}
	stores := c.openAll(1, 2, 3)
	follower := c.follower(c.leader())
	epochs := map[int32]int64{}
	for _, s := range stores {
		b := registerSelf(t, s, 1)
		epochs[b.ID] = b.Epoch
		if err := follower.UnfenceBroker(t.Context(), b.ID, b.Epoch); err != nil {
			t.Fatal(err)
		}
	}
	topic, err := follower.CreateTopic(t.Context(), CreateTopic{Name: "spread", Partitions: 6, ReplicationFactor: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range topic.Partitions {
		if p.Leader != p.Replicas[0] || len(p.ISR) != 3 {
			t.Fatalf("created %+v", p)
		}
	}
	return c, epochs
}

// failOver fences broker b and unfences it, through s: b leads nothing and
// is in no ISR, as after a restart.
func failOver(t *testing.T, s *Store, epochs map[int32]int64, b int32) {
	t.Helper()
	if err := s.FenceBroker(t.Context(), b, epochs[b]); err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Image().Topics["spread"].Partitions {
		if p.Leader == b || p.Leader == NoLeader {
			t.Fatalf("after fencing %d: %+v", b, p)
		}
	}
	if err := s.UnfenceBroker(t.Context(), b, epochs[b]); err != nil {
		t.Fatal(err)
	}
}

// preferring lists the partitions of "spread" that prefer broker b.
func preferring(img *Image, b int32) []base.TopicPartition {
	var out []base.TopicPartition
	for _, p := range img.Topics["spread"].Partitions {
		if p.Replicas[0] == b {
			out = append(out, base.TopicPartition{Topic: "spread", Partition: p.Index})
		}
	}
	return out
}

// TestClusterElectPreferredLeaders: ElectPreferredLeaders through a
// follower answers not needed, not available (the preferred replica out of
// the ISR after a failover), and, once it is back in the ISR, elects it.
func TestClusterElectPreferredLeaders(t *testing.T) {
	c, epochs := brokersCluster(t, func(*Options) {})
	follower := c.follower(c.leader())
	b := follower.opts.NodeID
	failOver(t, follower, epochs, b)
	mine := preferring(follower.Image(), b)
	var all []base.TopicPartition
	for i := range int32(6) {
		all = append(all, base.TopicPartition{Topic: "spread", Partition: i})
	}
	for tp, err := range follower.ElectPreferredLeaders(t.Context(), all) {
		want := ErrElectionNotNeeded
		if tp.Partition == mine[0].Partition || tp.Partition == mine[1].Partition {
			want = ErrPreferredLeaderNotAvailable
		}
		if !errors.Is(err, want) {
			t.Errorf("%s before rejoining: %v, want %v", tp, err, want)
		}
	}
	for _, tp := range mine {
		rejoin(t, follower, epochs, tp, b)
	}
	for tp, err := range follower.ElectPreferredLeaders(t.Context(), append(mine, base.TopicPartition{Topic: "gone", Partition: 0})) {
		switch {
		case tp.Topic == "gone" && !errors.Is(err, ErrUnknownTopic):
			t.Errorf("unknown topic: %v", err)
		case tp.Topic != "gone" && err != nil:
			t.Errorf("%s: %v, want elected", tp, err)
		}
	}
	// The answer is read from the asking member's image: it has the change.
	for _, tp := range mine {
		if p := follower.Image().Topics["spread"].Partitions[tp.Partition]; p.Leader != b {
			t.Errorf("%s after its election: %+v", tp, p)
		}
	}
}

// TestClusterAutoLeaderRebalance: after a failover the controller gives
// each partition back to its preferred replica once that replica is back
// in the ISR, and the next controller does so too.
func TestClusterAutoLeaderRebalance(t *testing.T) {
	c, epochs := brokersCluster(t, func(o *Options) {
		o.LeaderImbalanceCheckInterval = 100 * time.Millisecond
		o.LeaderImbalancePercentage = 10
	})
	controller := c.leader()
	round := func(s *Store, b int32) {
		t.Helper()
		failOver(t, s, epochs, b)
		mine := preferring(s.Image(), b)
		for _, tp := range mine {
			if p := s.Image().Topics["spread"].Partitions[tp.Partition]; p.Leader == b {
				t.Fatalf("%s led by %d while it is out of the ISR: %+v", tp, b, p)
			}
		}
		for i := range int32(6) {
			rejoin(t, s, epochs, base.TopicPartition{Topic: "spread", Partition: i}, b)
		}
		for _, other := range c.open() {
			waitFor(t, fmt.Sprintf("node %d to see broker %d lead its preferred partitions", other.opts.NodeID, b), func() bool {
				for _, p := range other.Image().Topics["spread"].Partitions {
					if p.Leader != p.Replicas[0] {
						return false
					}
				}
				return true
			})
		}
	}
	follower := c.follower(controller)
	round(follower, follower.opts.NodeID)

	c.close(controller)
	next := c.leader()
	survivor := c.follower(next)
	round(survivor, survivor.opts.NodeID)
}
