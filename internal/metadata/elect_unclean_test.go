package metadata

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func TestUncleanElection(t *testing.T) {
	live := func(ids ...int32) func(int32) bool {
		return func(id int32) bool { return slices.Contains(ids, id) }
	}
	for _, tc := range []struct {
		name       string
		p          Partition
		eligible   func(int32) bool
		lost       func(int32) bool
		wantLeader int32
		wantISR    []int32
		changed    bool
	}{
		{"has a leader", Partition{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1}}, live(1, 2), live(), 1, []int32{1}, false},
		{"an ISR member is back", Partition{Leader: NoLeader, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3}}, live(3), live(), 3, []int32{2, 3}, true},
		{"first live replica outside the ISR", Partition{Leader: NoLeader, Replicas: []int32{1, 2, 3}, ISR: []int32{1}}, live(2, 3), live(), 2, []int32{2}, true},
		{"assignment order, not id order", Partition{Leader: NoLeader, Replicas: []int32{3, 1, 2}, ISR: []int32{2}}, live(1, 3), live(), 3, []int32{3}, true},
		{"an adding replica is passed over", Partition{Leader: NoLeader, Replicas: []int32{1, 4, 2}, ISR: []int32{1}, AddingReplicas: []int32{4}}, live(4, 2), live(), 2, []int32{2}, true},
		{"only an adding replica is live", Partition{Leader: NoLeader, Replicas: []int32{1, 4}, ISR: []int32{1}, AddingReplicas: []int32{4}}, live(4), live(), NoLeader, []int32{1}, false},
		{"nobody is live", Partition{Leader: NoLeader, Replicas: []int32{1, 2}, ISR: []int32{1}}, live(), live(), NoLeader, []int32{1}, false},
		{"a replica that started over is passed over", Partition{Leader: NoLeader, Replicas: []int32{3, 1, 2}, ISR: []int32{}}, live(3, 2), live(3), 2, []int32{2}, true},
		{"... unless it is the only live one", Partition{Leader: NoLeader, Replicas: []int32{3, 1}, ISR: []int32{}}, live(3), live(3), 3, []int32{3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := uncleanElection(tc.p, tc.eligible, tc.lost)
			if changed != tc.changed || got.Leader != tc.wantLeader || !slices.Equal(got.ISR, tc.wantISR) {
				t.Fatalf("uncleanElection = leader %d ISR %v changed %v, want %d %v %v", got.Leader, got.ISR, changed, tc.wantLeader, tc.wantISR, tc.changed)
			}
			if changed && (got.LeaderEpoch != tc.p.LeaderEpoch+1 || got.PartitionEpoch != tc.p.PartitionEpoch+1) {
				t.Fatalf("epochs %d/%d after %d/%d", got.LeaderEpoch, got.PartitionEpoch, tc.p.LeaderEpoch, tc.p.PartitionEpoch)
			}
		})
	}
}

// TestUncleanElectionProperties: an unclean election keeps the partition
// invariants, elects only an eligible replica that is not being added,
// prefers the ISR, and never touches a partition with a leader.
func TestUncleanElectionProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		replicas := rapid.SliceOfNDistinct(rapid.Int32Range(1, 6), 1, 5, rapid.ID[int32]).Draw(t, "replicas")
		isr := []int32{}
		for _, r := range replicas {
			if rapid.Bool().Draw(t, "in isr") {
				isr = append(isr, r)
			}
		}
		if len(isr) == 0 {
			isr = []int32{replicas[0]}
		}
		var adding []int32
		for _, r := range replicas {
			if !slices.Contains(isr, r) && rapid.Bool().Draw(t, "adding") {
				adding = append(adding, r)
			}
		}
		liveSet := rapid.SliceOfDistinct(rapid.Int32Range(1, 6), rapid.ID[int32]).Draw(t, "live")
		eligible := func(id int32) bool { return slices.Contains(liveSet, id) }
		leader := NoLeader
		if rapid.Bool().Draw(t, "led") {
			leader = isr[0]
		}
		if rapid.Bool().Draw(t, "ISR lost its logs") {
			isr, leader = []int32{}, NoLeader
		}
		p := Partition{Leader: leader, Replicas: replicas, ISR: isr, AddingReplicas: adding}
		lostSet := rapid.SliceOfDistinct(rapid.Int32Range(1, 6), rapid.ID[int32]).Draw(t, "lost")
		lost := func(id int32) bool { return slices.Contains(lostSet, id) }
		got, changed := uncleanElection(p, eligible, lost)
		switch {
		case leader != NoLeader && changed:
			t.Fatal("changed a partition that has a leader")
		case !changed:
			return
		case !eligible(got.Leader) || slices.Contains(adding, got.Leader) || !slices.Contains(got.ISR, got.Leader):
			t.Fatalf("elected %d, ISR %v", got.Leader, got.ISR)
		}
		cleanLeader := electLeader(replicas, isr, eligible)
		if cleanLeader != NoLeader && got.Leader != cleanLeader {
			t.Fatalf("elected %d outside the ISR while ISR member %d could lead", got.Leader, cleanLeader)
		}
		if cleanLeader == NoLeader && lost(got.Leader) {
			for _, r := range replicas {
				if eligible(r) && !slices.Contains(adding, r) && !lost(r) {
					t.Fatalf("elected %d, which started over empty, while %d could lead", got.Leader, r)
				}
			}
		}
	})
}

func TestElectUncleanLeaders(t *testing.T) {
	s, epochs := brokersStore(t, nil)
	t0 := base.TopicPartition{Topic: "t", Partition: 0}
	t1 := base.TopicPartition{Topic: "t", Partition: 1}
	tiered := base.TopicPartition{Topic: "tiered", Partition: 0}
	if _, err := s.CreateTopic(t.Context(), CreateTopic{Name: "tiered", Assignments: [][]int32{{1, 3}},
		Configs: map[string]string{"remote.storage.enable": "true"}}); err != nil {
		t.Fatal(err)
	}
	// Brokers 2 and 3 leave the ISRs, then 1, the last member, goes too.
	for _, id := range []int32{2, 3, 1} {
		if err := s.FenceBroker(t.Context(), id, epochs[id]); err != nil {
			t.Fatal(err)
		}
	}
	if p := s.Image().Topics["t"].Partitions[0]; p.Leader != NoLeader || !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("t-0 after the fences: %+v", p)
	}
	got := s.ElectUncleanLeaders(t.Context(), []base.TopicPartition{t0, {Topic: "nope"}})
	if !errors.Is(got[t0], ErrEligibleLeadersNotAvailable) || !errors.Is(got[base.TopicPartition{Topic: "nope"}], ErrUnknownTopic) {
		t.Fatalf("with every replica fenced: %v", got)
	}
	if err := s.UnfenceBroker(t.Context(), 3, epochs[3]); err != nil {
		t.Fatal(err)
	}
	got = s.ElectUncleanLeaders(t.Context(), []base.TopicPartition{t0, t1})
	if len(got) != 2 || got[t0] != nil || got[t1] != nil {
		t.Fatalf("with broker 3 back: %v", got)
	}
	for _, p := range s.Image().Topics["t"].Partitions {
		if p.Leader != 3 || !slices.Equal(p.ISR, []int32{3}) {
			t.Fatalf("partition %d after the unclean election: leader %d ISR %v, want 3 [3]", p.Index, p.Leader, p.ISR)
		}
	}
	got = s.ElectUncleanLeaders(t.Context(), []base.TopicPartition{t0})
	if !errors.Is(got[t0], ErrElectionNotNeeded) {
		t.Fatalf("electing again: %v", got)
	}

	// A tiered topic is refused, though broker 3 is live.
	if got := s.ElectUncleanLeaders(t.Context(), []base.TopicPartition{tiered}); !errors.Is(got[tiered], ErrEligibleLeadersNotAvailable) {
		t.Fatalf("tiered topic: %v", got)
	}
}

// TestApplyElectUncleanDecidesAgain: apply decides each UNCLEAN election
// against the image it applies to, not the proposer's: a partition that
// has a leader by then keeps it (even one that is not the first eligible
// ISR replica), and a tiered topic's partition stays leaderless.
func TestApplyElectUncleanDecidesAgain(t *testing.T) {
	img := threeBrokers(t)
	epochs := map[int32]int64{1: img.Brokers[1].Epoch, 2: img.Brokers[2].Epoch}
	// t-0 fails over from 1 to 2; 1 comes back and rejoins the ISR, led by 2.
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 1, Epoch: epochs[1]}, nil)
	img = applyChecked(t, img, &unfenceBrokerCmd{ID: 1, Epoch: epochs[1]}, nil)
	p := partitionOf(img, "t", 0)
	img = applyChecked(t, img, &alterPartitionCmd{TopicID: tid(1), Partition: 0, Leader: 2, BrokerEpoch: epochs[2],
		LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: []int32{1, 2, 3}}, nil)
	led := partitionOf(img, "t", 0)
	if led.Leader != 2 || !slices.Equal(led.ISR, []int32{1, 2, 3}) {
		t.Fatalf("t-0 before the election: %+v", led)
	}
	got := applyChecked(t, img, &electUncleanCmd{Partitions: []partitionRef{{TopicID: tid(1), Partition: 0}}}, nil)
	if !reflect.DeepEqual(partitionOf(got, "t", 0), led) {
		t.Errorf("UNCLEAN election of a led partition: %+v, was %+v", partitionOf(got, "t", 0), led)
	}

	// 2 then 1 are fenced: tiered-0 and plain-0 are left with ISR [1] and
	// no leader; 2 comes back, outside their ISRs.
	img = applyChecked(t, img, &createTopicCmd{Name: "tiered", ID: tid(2), Assignments: [][]int32{{1, 2}},
		Configs: map[string]string{"remote.storage.enable": "true"}}, nil)
	img = applyChecked(t, img, &createTopicCmd{Name: "plain", ID: tid(3), Assignments: [][]int32{{1, 2}}}, nil)
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 2, Epoch: epochs[2]}, nil)
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 1, Epoch: epochs[1]}, nil)
	img = applyChecked(t, img, &unfenceBrokerCmd{ID: 2, Epoch: epochs[2]}, nil)
	for _, name := range []string{"tiered", "plain"} {
		if p := partitionOf(img, name, 0); p.Leader != NoLeader || !slices.Equal(p.ISR, []int32{1}) {
			t.Fatalf("%s-0 after the fences: %+v", name, p)
		}
	}
	got = applyChecked(t, img, &electUncleanCmd{Partitions: []partitionRef{{TopicID: tid(2)}, {TopicID: tid(3)}}}, nil)
	if p := partitionOf(got, "tiered", 0); !reflect.DeepEqual(p, partitionOf(img, "tiered", 0)) {
		t.Errorf("UNCLEAN election of a tiered partition: %+v", p)
	}
	if p := partitionOf(got, "plain", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) {
		t.Errorf("UNCLEAN election of plain-0: %+v, want leader 2, ISR [2]", p)
	}
}
