package metadata

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestLostLogs(t *testing.T) {
	var unknown [16]byte
	a, b := [16]byte{1}, [16]byte{2}
	for _, tc := range []struct {
		old, now [16]byte
		want     bool
	}{{a, a, false}, {a, b, true}, {unknown, b, false}, {a, unknown, false}, {unknown, unknown, false}} {
		if got := lostLogs(tc.old, tc.now); got != tc.want {
			t.Errorf("lostLogs(%v, %v) = %v, want %v", tc.old[0], tc.now[0], got, tc.want)
		}
	}
}

func TestPartitionAfterLogLoss(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       Partition
		changed bool
	}{
		{"last ISR member, no leader", Partition{Leader: NoLeader, Replicas: []int32{1, 2}, ISR: []int32{1}}, true},
		{"one of several", Partition{Leader: 2, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}, false},
		{"another's ISR", Partition{Leader: NoLeader, Replicas: []int32{1, 2}, ISR: []int32{2}}, false},
		{"still leading (not fenced)", Partition{Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := partitionAfterLogLoss(tc.p, 1)
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v (%+v)", changed, tc.changed, got)
			}
			if changed && (len(got.ISR) != 0 || got.Leader != NoLeader || got.PartitionEpoch != tc.p.PartitionEpoch+1) {
				t.Fatalf("after the loss: %+v", got)
			}
			if err := validatePartitionState(got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRegisterBrokerWithoutItsLogs: a broker that registers again with the
// same log directory is elected again where it was the last in-sync
// replica; one that comes back with another (its disk replaced) is not:
// those partitions keep no leader and an empty ISR, through a restart of
// the quorum, until an UNCLEAN election.
func TestRegisterBrokerWithoutItsLogs(t *testing.T) {
	o := testOptions(t, t.TempDir(), "")
	s := openStore(t, o)
	register := func(id int32, incarnation, logDir byte) int64 {
		t.Helper()
		b, err := s.RegisterBroker(t.Context(), BrokerRegistration{ID: id, Incarnation: [16]byte{incarnation},
			LogDir: [16]byte{logDir}, Endpoints: endpoint(9000 + id)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UnfenceBroker(t.Context(), id, b.Epoch); err != nil {
			t.Fatal(err)
		}
		return b.Epoch
	}
	epoch1, epoch2 := register(1, 1, 1), register(2, 2, 2)
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "solo", Assignments: [][]int32{{1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "both", Assignments: [][]int32{{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FenceBroker(t.Context(), 2, epoch2); err != nil {
		t.Fatal(err)
	}
	if err := s.FenceBroker(t.Context(), 1, epoch1); err != nil {
		t.Fatal(err)
	}
	partition := func(topic string) Partition { return s.Image().Topics[topic].Partitions[0] }

	register(1, 11, 1) // a restart: same log directory
	for _, topic := range []string{"solo", "both"} {
		if p := partition(topic); p.Leader != 1 || !slices.Equal(p.ISR, []int32{1}) {
			t.Fatalf("%s after a restart with its logs: %+v", topic, p)
		}
	}
	epoch1 = s.Image().Brokers[1].Epoch
	if err := s.FenceBroker(t.Context(), 1, epoch1); err != nil {
		t.Fatal(err)
	}
	register(1, 12, 9) // another log directory
	for _, topic := range []string{"solo", "both"} {
		if p := partition(topic); p.Leader != NoLeader || len(p.ISR) != 0 {
			t.Fatalf("%s after a restart without its logs: %+v", topic, p)
		}
	}
	if b := s.Image().Brokers[1]; b.LogDir != [16]byte{9} || !b.LostLogs {
		t.Fatalf("registered log dir %v, lost logs %v", b.LogDir, b.LostLogs)
	}

	// Through a snapshot and a restart.
	if err := s.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = openStore(t, o)
	t.Cleanup(func() { closeStore(t, s) })
	if p := partition("solo"); p.Leader != NoLeader || len(p.ISR) != 0 {
		t.Fatalf("solo after a restart of the quorum: %+v", p)
	}

	// Broker 1 restarts on its new directory: it still started over. Broker
	// 2, out of sync but with its logs, comes back too.
	epoch1 = s.Image().Brokers[1].Epoch
	if err := s.FenceBroker(t.Context(), 1, epoch1); err != nil {
		t.Fatal(err)
	}
	register(1, 13, 9)
	register(2, 22, 2)
	if b1, b2 := s.Image().Brokers[1], s.Image().Brokers[2]; !b1.LostLogs || b2.LostLogs {
		t.Fatalf("lost logs: broker 1 %v, broker 2 %v", b1.LostLogs, b2.LostLogs)
	}

	solo, both := base.TopicPartition{Topic: "solo"}, base.TopicPartition{Topic: "both"}
	if got := s.ElectUncleanLeaders(t.Context(), []base.TopicPartition{solo, both}); got[solo] != nil || got[both] != nil {
		t.Fatalf("unclean election: %v", got)
	}
	// solo has only broker 1; both prefers broker 2, which kept its logs.
	for topic, want := range map[string]int32{"solo": 1, "both": 2} {
		if p := partition(topic); p.Leader != want || !slices.Equal(p.ISR, []int32{want}) {
			t.Fatalf("%s after the unclean election: %+v, want %d leading alone", topic, p, want)
		}
	}
}
