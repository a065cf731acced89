package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// brokersStore is a single-node Store (with o's leader balancing) where
// brokers 1, 2 and 3 are registered and unfenced, with topic "t" of
// partitions preferring 1 and 2, replicated on all three.
func brokersStore(t *testing.T, edit func(*Options)) (*Store, map[int32]int64) {
	t.Helper()
	o := testOptions(t, t.TempDir(), "")
	if edit != nil {
		edit(&o)
	}
	s := openStore(t, o)
	t.Cleanup(func() { closeStore(t, s) })
	epochs := map[int32]int64{}
	for id := int32(1); id <= 3; id++ {
		b, err := s.RegisterBroker(t.Context(), BrokerRegistration{ID: id, Incarnation: [16]byte{byte(id)}, Endpoints: endpoint(9000 + id)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UnfenceBroker(t.Context(), id, b.Epoch); err != nil {
			t.Fatal(err)
		}
		epochs[id] = b.Epoch
	}
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "t", Assignments: [][]int32{{1, 2, 3}, {2, 3, 1}}}); err != nil {
		t.Fatal(err)
	}
	return s, epochs
}

// rejoin is what partition tp's leader does once broker id has caught
// up: it adds id back to the ISR.
func rejoin(t *testing.T, s *Store, epochs map[int32]int64, tp base.TopicPartition, id int32) {
	t.Helper()
	topic := s.Image().Topics[tp.Topic]
	p := topic.Partitions[tp.Partition]
	isr := append(slices.Clone(p.ISR), id)
	if _, err := s.AlterPartition(t.Context(), ISRChange{TopicID: topic.ID, Partition: tp.Partition, Leader: p.Leader,
		BrokerEpoch: epochs[p.Leader], LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr}); err != nil {
		t.Fatalf("%s: adding %d to the ISR: %v", tp, id, err)
	}
}

func TestElectPreferredLeaders(t *testing.T) {
	s, epochs := brokersStore(t, nil)
	t0, t1 := base.TopicPartition{Topic: "t", Partition: 0}, base.TopicPartition{Topic: "t", Partition: 1}
	if err := s.FenceBroker(t.Context(), 1, epochs[1]); err != nil {
		t.Fatal(err)
	}
	check := func(what string, got map[base.TopicPartition]error, want map[base.TopicPartition]error) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %d answers, want %d: %v", what, len(got), len(want), got)
		}
		for tp, w := range want {
			if g, ok := got[tp]; !ok || !errors.Is(g, w) || (w == nil) != (g == nil) {
				t.Errorf("%s: %s: %v, want %v", what, tp, g, w)
			}
		}
	}
	check("preferred fenced", s.ElectPreferredLeaders(t.Context(), []base.TopicPartition{t0, t1, t0,
		{Topic: "nope", Partition: 0}, {Topic: "t", Partition: 2}, {Topic: "t", Partition: -1}}),
		map[base.TopicPartition]error{t0: ErrPreferredLeaderNotAvailable, t1: ErrElectionNotNeeded,
			{Topic: "nope", Partition: 0}: ErrUnknownTopic, {Topic: "t", Partition: 2}: ErrInvalidPartitions,
			{Topic: "t", Partition: -1}: ErrInvalidPartitions})
	if err := s.UnfenceBroker(t.Context(), 1, epochs[1]); err != nil {
		t.Fatal(err)
	}
	check("preferred out of sync", s.ElectPreferredLeaders(t.Context(), []base.TopicPartition{t0}),
		map[base.TopicPartition]error{t0: ErrPreferredLeaderNotAvailable})
	rejoin(t, s, epochs, t0, 1)
	before := s.Image().Topics["t"].Partitions[0]
	check("preferred back in sync", s.ElectPreferredLeaders(t.Context(), []base.TopicPartition{t0, t1}),
		map[base.TopicPartition]error{t0: nil, t1: ErrElectionNotNeeded})
	if p := s.Image().Topics["t"].Partitions[0]; p.Leader != 1 || p.LeaderEpoch != before.LeaderEpoch+1 {
		t.Errorf("after the election: %+v (before %+v)", p, before)
	}
	check("nothing asked", s.ElectPreferredLeaders(t.Context(), nil), map[base.TopicPartition]error{})
}

// TestLeaderBalanceLoopOnSingleNode: with a check interval, the controller
// gives a partition back to its preferred replica once that replica is
// unfenced and back in the ISR, and not before.
func TestLeaderBalanceLoopOnSingleNode(t *testing.T) {
	const interval = 20 * time.Millisecond
	logs := &lockedBuffer{}
	s, epochs := brokersStore(t, func(o *Options) {
		o.LeaderImbalanceCheckInterval = interval
		o.LeaderImbalancePercentage = 10
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	t0 := base.TopicPartition{Topic: "t", Partition: 0}
	if err := s.FenceBroker(t.Context(), 1, epochs[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.UnfenceBroker(t.Context(), 1, epochs[1]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * interval)
	if p := s.Image().Topics["t"].Partitions[0]; p.Leader != 2 {
		t.Fatalf("leadership moved to a replica outside the ISR: %+v", p)
	}
	rejoin(t, s, epochs, t0, 1)
	waitFor(t, "broker 1 to lead t-0 again", func() bool { return s.Image().Topics["t"].Partitions[0].Leader == 1 })
	if p := s.Image().Topics["t"].Partitions[1]; p.Leader != 2 {
		t.Errorf("t-1, led by its preferred replica, moved: %+v", p)
	}
	// The loop logs once its proposal returns, which may be after the
	// image shows the move.
	logged := func() bool {
		out := logs.String()
		return strings.Contains(out, "moved leadership back to preferred replicas") && strings.Contains(out, "t-0: 2→1")
	}
	waitFor(t, "the move to be logged", logged)
}

// lockedBuffer is a log destination safe for the Store's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestOptionsValidateLeaderImbalance(t *testing.T) {
	good := Options{Dir: "d", Clock: testOptions(t, "d", "").Clock, LeaderImbalanceCheckInterval: time.Second, LeaderImbalancePercentage: 100}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, edit := range []func(*Options){
		func(o *Options) { o.LeaderImbalanceCheckInterval = -time.Second },
		func(o *Options) { o.LeaderImbalancePercentage = -1 },
		func(o *Options) { o.LeaderImbalancePercentage = 101 },
	} {
		bad := good
		edit(&bad)
		if bad.Validate() == nil {
			t.Errorf("Validate accepted %s", fmt.Sprintf("%+v", bad))
		}
	}
}
