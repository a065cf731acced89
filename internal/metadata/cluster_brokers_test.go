package metadata

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// beat sends s's heartbeats for broker b every interval until the returned
// stop is called (also at cleanup).
func beat(t *testing.T, s *Store, b *Broker, interval time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			// Errors (an election under way) are retried at the next beat.
			_, _ = s.Heartbeat(t.Context(), Heartbeat{BrokerID: b.ID, BrokerEpoch: b.Epoch, AppliedVersion: s.Image().Version})
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

func registerSelf(t *testing.T, s *Store, incarnation byte) *Broker {
	t.Helper()
	b, err := s.RegisterBroker(t.Context(), BrokerRegistration{ID: s.opts.NodeID, Incarnation: [16]byte{incarnation},
		Endpoints: endpoint(19000 + s.opts.NodeID)})
	if err != nil {
		t.Fatalf("node %d registering: %v", s.opts.NodeID, err)
	}
	if !b.Fenced {
		t.Fatalf("node %d registered unfenced: %+v", s.opts.NodeID, b)
	}
	return b
}

// TestClusterBrokerLiveness: brokers register through any member, are
// unfenced by their heartbeats, get partitions spread over them, and are
// fenced when their heartbeats stop (also across a controller failover),
// which moves leadership within the ISR; an ISR change through a follower
// brings a broker back.
func TestClusterBrokerLiveness(t *testing.T) {
	c := newTestCluster(t, 3, 0)
	const session = 1500 * time.Millisecond
	c.setSessionTimeout(session)
	stores := c.openAll(1, 2, 3)
	controller := c.leader()
	stops := map[int32]func(){}
	brokers := map[int32]*Broker{}
	for _, s := range stores {
		b := registerSelf(t, s, 1)
		brokers[b.ID] = b
		stops[b.ID] = beat(t, s, b, 100*time.Millisecond)
	}
	for _, s := range stores {
		waitFor(t, "three unfenced brokers", func() bool { return len(s.Image().UnfencedBrokers()) == 3 })
	}

	// A heartbeat from a replaced incarnation is refused, also when forwarded.
	follower := c.follower(controller)
	if _, err := follower.Heartbeat(t.Context(), Heartbeat{BrokerID: 1, BrokerEpoch: brokers[1].Epoch + 1000}); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Errorf("stale heartbeat: %v, want ErrStaleBrokerEpoch", err)
	}
	if _, err := follower.Heartbeat(t.Context(), Heartbeat{BrokerID: 9, BrokerEpoch: 1}); !errors.Is(err, ErrUnknownBroker) {
		t.Errorf("unknown broker's heartbeat: %v, want ErrUnknownBroker", err)
	}

	topic, err := follower.CreateTopic(t.Context(), CreateTopic{Name: "spread", Partitions: 6, ReplicationFactor: 3})
	if err != nil {
		t.Fatal(err)
	}
	led := map[int32]int{}
	for _, p := range topic.Partitions {
		if len(p.Replicas) != 3 || !slices.Equal(p.ISR, p.Replicas) || p.Leader != p.Replicas[0] {
			t.Fatalf("partition %d: %+v", p.Index, p)
		}
		led[p.Leader]++
	}
	if led[1] != 2 || led[2] != 2 || led[3] != 2 {
		t.Errorf("leaders of 6 partitions over 3 brokers: %v", led)
	}
	if _, err := follower.CreateTopic(t.Context(), CreateTopic{Name: "too-wide", Partitions: 1, ReplicationFactor: 4}); !errors.Is(err, ErrInvalidReplicationFactor) {
		t.Errorf("RF 4 on 3 brokers: %v", err)
	}

	// A silent broker is fenced: it leaves every ISR and leads nothing.
	silent := follower.opts.NodeID
	stops[silent]()
	waitFor(t, fmt.Sprintf("broker %d fenced", silent), func() bool { return controller.Image().Brokers[silent].Fenced })
	img := controller.Image()
	for _, p := range img.Topics["spread"].Partitions {
		if p.Leader == silent || slices.Contains(p.ISR, silent) || len(p.ISR) != 2 {
			t.Errorf("after fencing %d: partition %d %+v", silent, p.Index, p)
		}
	}
	// It beats again: unfenced, but back in an ISR only when its leader says.
	stops[silent] = beat(t, follower, brokers[silent], 100*time.Millisecond)
	waitFor(t, fmt.Sprintf("broker %d unfenced", silent), func() bool { return !controller.Image().Brokers[silent].Fenced })
	img = controller.Image()
	p := img.Topics["spread"].Partitions[0]
	got, err := follower.AlterPartition(t.Context(), ISRChange{TopicID: topic.ID, Partition: 0, Leader: p.Leader,
		BrokerEpoch: brokers[p.Leader].Epoch, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: p.Replicas})
	if err != nil || !slices.Equal(got.ISR, p.Replicas) {
		t.Fatalf("AlterPartition through a follower: %+v, %v", got, err)
	}
	if _, err := follower.AlterPartition(t.Context(), ISRChange{TopicID: topic.ID, Partition: 0, Leader: p.Leader,
		BrokerEpoch: brokers[p.Leader].Epoch, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: p.Replicas}); !errors.Is(err, ErrInvalidUpdateVersion) {
		t.Errorf("replayed AlterPartition: %v, want ErrInvalidUpdateVersion", err)
	}

	// The controller's node goes away; the next controller gives everyone a
	// full session, then fences the broker that stopped beating with it.
	gone := controller.opts.NodeID
	stops[gone]()
	c.close(controller)
	next := c.leader()
	waitFor(t, fmt.Sprintf("broker %d fenced by the next controller", gone), func() bool { return next.Image().Brokers[gone].Fenced })
	for _, p := range next.Image().Topics["spread"].Partitions {
		if p.Leader == gone || p.Leader == NoLeader {
			t.Errorf("after the controller's node left: partition %d %+v", p.Index, p)
		}
	}
	for _, s := range c.open() {
		if b := next.Image().Brokers[s.opts.NodeID]; b.Fenced {
			t.Errorf("beating broker %d fenced", b.ID)
		}
	}
}
