package metadata

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestPreferredElection(t *testing.T) {
	fenced := func(ids ...int32) func(int32) bool {
		return func(r int32) bool { return !slices.Contains(ids, r) }
	}
	base := Partition{Leader: 2, LeaderEpoch: 4, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	for name, tc := range map[string]struct {
		p        Partition
		eligible func(int32) bool
		want     preferredState
	}{
		"preferred leads":       {Partition{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}, fenced(), preferredLeads},
		"preferred out of sync": {Partition{Leader: 2, Replicas: []int32{1, 2}, ISR: []int32{2}}, fenced(), preferredOutOfSync},
		"preferred fenced":      {base, fenced(1), preferredIneligible},
		"electable":             {base, fenced(3), preferredElectable},
		"electable, no leader":  {Partition{Leader: NoLeader, Replicas: []int32{1, 2}, ISR: []int32{1}}, fenced(2), preferredElectable},
	} {
		t.Run(name, func(t *testing.T) {
			if got := preferredStateOf(tc.p, tc.eligible); got != tc.want {
				t.Fatalf("state %d, want %d", got, tc.want)
			}
			got, changed := preferredElection(tc.p, tc.eligible)
			if changed != (tc.want == preferredElectable) {
				t.Fatalf("changed = %v in state %d", changed, tc.want)
			}
			if !changed {
				if !reflect.DeepEqual(got, tc.p) {
					t.Fatalf("unchanged election returned %+v", got)
				}
				return
			}
			want := tc.p
			want.Leader, want.LeaderEpoch, want.PartitionEpoch = tc.p.Replicas[0], tc.p.LeaderEpoch+1, tc.p.PartitionEpoch+1
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("elected %+v, want %+v", got, want)
			}
		})
	}
}

// genPartitionState draws a partition as failovers leave them: the leader
// is any eligible ISR member, or NoLeader when the ISR is one fenced broker.
func genPartitionState(t *rapid.T, index int32, eligible func(int32) bool, label string) Partition {
	replicas := rapid.SliceOfNDistinct(rapid.Int32Range(1, 5), 1, 4, rapid.ID[int32]).Draw(t, label+"replicas")
	isr := rapid.SliceOfNDistinct(rapid.SampledFrom(replicas), 1, len(replicas), rapid.ID[int32]).Draw(t, label+"isr")
	isr = isrInReplicaOrder(isr, replicas)
	var candidates []int32
	for _, r := range isr {
		if eligible(r) {
			candidates = append(candidates, r)
		}
	}
	p := Partition{Index: index, Replicas: replicas, ISR: isr,
		LeaderEpoch: 3, PartitionEpoch: int32(rapid.IntRange(0, 9).Draw(t, label+"epoch"))}
	if len(candidates) == 0 {
		p.Leader, p.ISR = NoLeader, isr[:1]
		return p
	}
	p.Leader = rapid.SampledFrom(candidates).Draw(t, label+"leader")
	return p
}

// genBalanceImage draws brokers 1..5, some fenced, and up to four topics
// whose partitions are in states failovers leave.
func genBalanceImage(t *rapid.T) *Image {
	img := emptyImage()
	for id := int32(1); id <= 5; id++ {
		b := register(id, 1)
		img.Brokers[id] = &Broker{ID: id, Incarnation: b.Incarnation, Epoch: int64(id), Endpoints: b.Endpoints,
			Fenced: rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("fenced%d", id)) == 0}
	}
	for i := range rapid.IntRange(0, 4).Draw(t, "topics") {
		name := fmt.Sprintf("t%d", i)
		tp := &Topic{Name: name, ID: tid(byte(i + 1))}
		for j := range rapid.IntRange(1, 6).Draw(t, name+"partitions") {
			tp.Partitions = append(tp.Partitions, genPartitionState(t, int32(j), img.Eligible, fmt.Sprintf("%s-%d", name, j)))
		}
		img.Topics[name], img.TopicsByID[tp.ID] = tp, tp
	}
	return img
}

// naiveImbalance is leaderImbalance as Kafka writes it: a ratio per
// broker, compared with the percentage as a fraction.
func naiveImbalance(img *Image, percentage int) map[partitionRef]bool {
	preferred, notLed := map[int32]float64{}, map[int32]float64{}
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			preferred[p.Replicas[0]]++
			if p.Leader != p.Replicas[0] {
				notLed[p.Replicas[0]]++
			}
		}
	}
	out := map[partitionRef]bool{}
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			b := p.Replicas[0]
			if notLed[b]/preferred[b] > float64(percentage)/100 && p.Leader != b && slices.Contains(p.ISR, b) && img.Eligible(b) {
				out[partitionRef{TopicID: t.ID, Partition: p.Index}] = true
			}
		}
	}
	return out
}

// TestLeaderImbalanceProperties: leaderImbalance agrees with Kafka's ratio
// rule, picks only partitions whose preferred replica is in the ISR and
// eligible, in a stable order; once its picks are elected, it picks
// nothing more; 0% picks every electable partition and 100% none.
func TestLeaderImbalanceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := genBalanceImage(t)
		percentage := rapid.SampledFrom([]int{0, 1, 10, 25, 33, 50, 99, 100}).Draw(t, "percentage")
		got := leaderImbalance(img, percentage)
		if again := leaderImbalance(img, percentage); !reflect.DeepEqual(got, again) {
			t.Fatalf("not deterministic: %v then %v", got, again)
		}
		want := naiveImbalance(img, percentage)
		seen := map[partitionRef]bool{}
		for _, r := range got {
			if seen[r] {
				t.Fatalf("%v picked twice", r)
			}
			seen[r] = true
			p := img.TopicsByID[r.TopicID].Partitions[r.Partition]
			if b := p.Replicas[0]; !slices.Contains(p.ISR, b) || !img.Eligible(b) || p.Leader == b {
				t.Fatalf("picked %+v: preferred %d out of the ISR, fenced or leading", p, b)
			}
		}
		if !maps.Equal(seen, want) {
			t.Fatalf("picked %v, Kafka's rule picks %v", seen, want)
		}
		if !slices.IsSortedFunc(got, func(a, b partitionRef) int {
			an, bn := img.TopicsByID[a.TopicID].Name, img.TopicsByID[b.TopicID].Name
			if an != bn {
				return cmp.Compare(an, bn)
			}
			return int(a.Partition - b.Partition)
		}) {
			t.Fatalf("not in topic, partition order: %v", got)
		}
		if percentage == 100 && len(got) > 0 {
			t.Fatalf("100%% picked %v", got)
		}
		if percentage == 0 && len(got) != len(naiveImbalance(img, 0)) {
			t.Fatalf("0%% picked %v", got)
		}
		if len(got) == 0 {
			return
		}
		next, err := applyCommand(img, &electPreferredCmd{Partitions: got}, img.Version+1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if p := next.TopicsByID[r.TopicID].Partitions[r.Partition]; p.Leader != p.Replicas[0] {
				t.Fatalf("%v not elected: %+v", r, p)
			}
		}
		if more := leaderImbalance(next, percentage); len(more) > 0 {
			t.Fatalf("after electing %v, picks %v", got, more)
		}
	})
}

func TestLeaderImbalanceThreshold(t *testing.T) {
	// Broker 1 prefers ten partitions; broker 2 leads the first n of them.
	imageWith := func(n int) *Image {
		img := applyChecked(t, threeBrokers(t), &deleteTopicCmd{Name: "t", ID: tid(1)}, nil)
		tp := &Topic{Name: "ten", ID: tid(9)}
		for i := range 10 {
			p := Partition{Index: int32(i), Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}
			if i < n {
				p.Leader = 2
			}
			tp.Partitions = append(tp.Partitions, p)
		}
		return img.withTopic(tp, img.Version+1)
	}
	for _, tc := range []struct {
		notLed, percentage, want int
	}{
		{0, 0, 0}, {1, 0, 1}, {1, 10, 0}, {2, 10, 2}, {5, 50, 0}, {6, 50, 6}, {10, 99, 10}, {10, 100, 0},
	} {
		got := leaderImbalance(imageWith(tc.notLed), tc.percentage)
		if len(got) != tc.want {
			t.Errorf("%d of 10 not led, %d%%: picked %v, want %d", tc.notLed, tc.percentage, got, tc.want)
		}
	}
	// A fenced preferred replica is never picked, whatever the imbalance,
	// nor, once unfenced, before it is back in the ISR.
	img := imageWith(10)
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 1, Epoch: img.Brokers[1].Epoch}, nil)
	if got := leaderImbalance(img, 0); len(got) != 0 {
		t.Errorf("fenced preferred replica picked: %v", got)
	}
	img = applyChecked(t, img, &unfenceBrokerCmd{ID: 1, Epoch: img.Brokers[1].Epoch}, nil)
	if got := leaderImbalance(img, 0); len(got) != 0 {
		t.Errorf("out-of-sync preferred replica picked: %v", got)
	}
}

func TestApplyElectPreferred(t *testing.T) {
	img := threeBrokers(t)
	// Broker 1 fails over and comes back: it leads nothing, and is out of
	// the ISR until its leader says it caught up.
	img = applyChecked(t, img, &fenceBrokerCmd{ID: 1, Epoch: img.Brokers[1].Epoch}, nil)
	img = applyChecked(t, img, &unfenceBrokerCmd{ID: 1, Epoch: img.Brokers[1].Epoch}, nil)
	p0 := partitionOf(img, "t", 0)
	if p0.Leader != 2 {
		t.Fatalf("after failover: %+v", p0)
	}
	elect := &electPreferredCmd{Partitions: []partitionRef{{TopicID: tid(1), Partition: 0}, {TopicID: tid(1), Partition: 1}}}
	if got := applyChecked(t, img, elect, nil); !reflect.DeepEqual(got.Topics, img.Topics) {
		t.Fatalf("elected outside the ISR: %+v", partitionOf(got, "t", 0))
	}
	img = applyChecked(t, img, &alterPartitionCmd{TopicID: tid(1), Partition: 0, Leader: 2, BrokerEpoch: img.Brokers[2].Epoch,
		LeaderEpoch: p0.LeaderEpoch, PartitionEpoch: p0.PartitionEpoch, ISR: []int32{1, 2, 3}}, nil)
	before := partitionOf(img, "t", 0)
	// Named twice, elected once; unknown topics and partitions are skipped
	// (deleted meanwhile).
	elect.Partitions = append(elect.Partitions, partitionRef{TopicID: tid(1), Partition: 0},
		partitionRef{TopicID: tid(7), Partition: 0}, partitionRef{TopicID: tid(1), Partition: 9})
	got := applyChecked(t, img, elect, nil)
	p := partitionOf(got, "t", 0)
	if p.Leader != 1 || p.LeaderEpoch != before.LeaderEpoch+1 || p.PartitionEpoch != before.PartitionEpoch+1 || !slices.Equal(p.ISR, before.ISR) {
		t.Fatalf("elected %+v from %+v", p, before)
	}
	if q := partitionOf(got, "t", 1); !reflect.DeepEqual(q, partitionOf(img, "t", 1)) {
		t.Errorf("partition 1, led by its preferred replica, changed: %+v", q)
	}
	if again := applyChecked(t, got, elect, nil); !reflect.DeepEqual(again.Topics, got.Topics) {
		t.Error("a second election changed the image")
	}
	many := make([]partitionRef, maxPreferredElectionsPerCommand+1)
	for name, bad := range map[string]*electPreferredCmd{
		"none":               {},
		"too many":           {Partitions: many},
		"negative partition": {Partitions: []partitionRef{{TopicID: tid(1), Partition: -1}}},
	} {
		t.Run(name, func(t *testing.T) { applyChecked(t, img, bad, ErrInvalidCommand) })
	}
}

func TestElectPreferredCommandRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cmd := &electPreferredCmd{Partitions: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) partitionRef {
			return partitionRef{TopicID: tid(rapid.Byte().Draw(t, "id")), Partition: rapid.Int32().Draw(t, "partition")}
		}), 0, 8).Draw(t, "refs")}
		data, err := encodeCommand(cmd)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeCommand(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, cmd) && !(len(cmd.Partitions) == 0 && len(got.(*electPreferredCmd).Partitions) == 0) {
			t.Fatalf("round trip: %#v → %#v", cmd, got)
		}
	})
}

// TestElectPreferredKeepsInvariants interleaves preferred elections (the
// controller's picks, or any partitions) with random registrations,
// fences, unfences, topic creations and ISR changes: every image keeps the
// invariants, and an election only ever makes the preferred replica lead,
// from the ISR, while it is eligible.
func TestElectPreferredKeepsInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := emptyImage()
		elected := 0
		for i := range rapid.IntRange(1, 60).Draw(t, "n") {
			var cmd command
			if len(img.Topics) > 0 && rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("elect%d", i)) == 0 {
				cmd = genElection(t, img, i)
			} else {
				cmd = genClusterCommand(t, img, i)
			}
			next, err := applyCommand(img, cmd, uint64(i+1))
			if err != nil {
				if _, isElect := cmd.(*electPreferredCmd); isElect {
					t.Fatalf("election %#v refused: %v", cmd, err)
				}
				continue
			}
			if err := invariantErr(next); err != nil {
				t.Fatalf("after %#v: %v", cmd, err)
			}
			if _, isElect := cmd.(*electPreferredCmd); isElect {
				elected += checkElection(t, img, next)
			}
			img = next
		}
		t.Logf("partitions elected: %d", elected)
	})
}

// genElection draws an election of the controller's picks, or of random
// partitions of img.
func genElection(t *rapid.T, img *Image, i int) *electPreferredCmd {
	label := func(s string) string { return fmt.Sprintf("%s%d", s, i) }
	if rapid.Bool().Draw(t, label("picks")) {
		if picks := leaderImbalance(img, rapid.IntRange(0, 100).Draw(t, label("percentage"))); len(picks) > 0 {
			return &electPreferredCmd{Partitions: picks}
		}
	}
	names := slices.Sorted(maps.Keys(img.Topics))
	var refs []partitionRef
	for range rapid.IntRange(1, 4).Draw(t, label("refs")) {
		tp := img.Topics[rapid.SampledFrom(names).Draw(t, label("topic"))]
		refs = append(refs, partitionRef{TopicID: tp.ID, Partition: rapid.Int32Range(0, int32(len(tp.Partitions))).Draw(t, label("partition"))})
	}
	return &electPreferredCmd{Partitions: refs}
}

// checkElection checks that every partition an election changed is now
// led by its preferred replica, which was in the ISR and eligible, and
// returns how many changed.
func checkElection(t *rapid.T, before, after *Image) int {
	changed := 0
	for name, at := range after.Topics {
		bt := before.Topics[name]
		for j, np := range at.Partitions {
			op := bt.Partitions[j]
			if reflect.DeepEqual(np, op) {
				continue
			}
			changed++
			b := op.Replicas[0]
			if np.Leader != b || !slices.Contains(op.ISR, b) || !before.Eligible(b) || !slices.Equal(np.ISR, op.ISR) ||
				np.LeaderEpoch != op.LeaderEpoch+1 || np.PartitionEpoch != op.PartitionEpoch+1 {
				t.Fatalf("%s-%d: %+v → %+v", name, j, op, np)
			}
		}
	}
	return changed
}
