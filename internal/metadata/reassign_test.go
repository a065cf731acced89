package metadata

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func allEligible(int32) bool { return true }

func TestStartReassignment(t *testing.T) {
	for name, tc := range map[string]struct {
		p      Partition
		target []int32
		want   Partition
		err    error
	}{
		"move grows to the union, target first": {
			p:      Partition{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
			target: []int32{4, 2, 1},
			want: Partition{Leader: 1, PartitionEpoch: 1, Replicas: []int32{4, 2, 1, 3}, ISR: []int32{2, 1, 3},
				AddingReplicas: []int32{4}, RemovingReplicas: []int32{3}},
		},
		"same replicas is no change": {
			p:      Partition{Leader: 1, LeaderEpoch: 3, PartitionEpoch: 5, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
			target: []int32{1, 2},
			want:   Partition{Leader: 1, LeaderEpoch: 3, PartitionEpoch: 5, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
		},
		"reorder completes at once": {
			p:      Partition{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
			target: []int32{2, 1},
			want:   Partition{Leader: 1, PartitionEpoch: 1, Replicas: []int32{2, 1}, ISR: []int32{2, 1}},
		},
		"shrink completes at once; the removed leader steps down": {
			p:      Partition{Leader: 3, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3}},
			target: []int32{1, 2},
			want:   Partition{Leader: 2, LeaderEpoch: 1, PartitionEpoch: 1, Replicas: []int32{1, 2}, ISR: []int32{2}},
		},
		"shrink to an out-of-sync replica waits": {
			p:      Partition{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1}},
			target: []int32{2},
			want: Partition{Leader: 1, PartitionEpoch: 1, Replicas: []int32{2, 1}, ISR: []int32{1},
				RemovingReplicas: []int32{1}},
		},
		"replacing one in flight reverts the dropped adding replicas": {
			p: Partition{Leader: 4, LeaderEpoch: 2, PartitionEpoch: 4, Replicas: []int32{4, 5, 1}, ISR: []int32{4, 1},
				AddingReplicas: []int32{4, 5}, RemovingReplicas: []int32{1}},
			target: []int32{5, 2},
			want: Partition{Leader: 1, LeaderEpoch: 3, PartitionEpoch: 5, Replicas: []int32{5, 2, 1}, ISR: []int32{1},
				AddingReplicas: []int32{5, 2}, RemovingReplicas: []int32{1}},
		},
		"replacing keeps caught-up adding replicas in the target": {
			p: Partition{Leader: 1, Replicas: []int32{4, 5, 1}, ISR: []int32{4, 1},
				AddingReplicas: []int32{4, 5}, RemovingReplicas: []int32{1}},
			target: []int32{4, 1},
			want:   Partition{Leader: 1, PartitionEpoch: 1, Replicas: []int32{4, 1}, ISR: []int32{4, 1}},
		},
		"replacing with nothing in sync left is refused": {
			p: Partition{Leader: 4, Replicas: []int32{4, 1}, ISR: []int32{4},
				AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}},
			target: []int32{2},
			err:    ErrInvalidReplicaAssignment,
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, changed, err := startReassignment(tc.p, tc.target, allEligible)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			if changed != !reflect.DeepEqual(tc.p, tc.want) {
				t.Errorf("changed %v", changed)
			}
			if err := validatePartitionState(got); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestCancelReassignment(t *testing.T) {
	inFlight := Partition{Leader: 4, LeaderEpoch: 1, PartitionEpoch: 2, Replicas: []int32{4, 2, 1, 3}, ISR: []int32{4, 2, 1},
		AddingReplicas: []int32{4}, RemovingReplicas: []int32{3}}
	got, changed, err := cancelReassignment(inFlight, allEligible)
	want := Partition{Leader: 2, LeaderEpoch: 2, PartitionEpoch: 3, Replicas: []int32{2, 1, 3}, ISR: []int32{2, 1}}
	if err != nil || !changed || !reflect.DeepEqual(got, want) {
		t.Fatalf("cancel: %+v %v %v\nwant %+v", got, changed, err, want)
	}
	if _, _, err := cancelReassignment(want, allEligible); !errors.Is(err, ErrNoReassignmentInProgress) {
		t.Errorf("cancelling none: %v", err)
	}
	onlyAdding := Partition{Leader: 4, Replicas: []int32{4, 1}, ISR: []int32{4}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}}
	if _, _, err := cancelReassignment(onlyAdding, allEligible); !errors.Is(err, ErrInvalidReplicaAssignment) {
		t.Errorf("cancelling with only adding replicas in sync: %v", err)
	}
}

func TestCompleteReassignment(t *testing.T) {
	p := Partition{Leader: 1, LeaderEpoch: 1, PartitionEpoch: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 1},
		AddingReplicas: []int32{2, 3}, RemovingReplicas: []int32{1}}
	if got := completeReassignment(p, allEligible); !reflect.DeepEqual(got, p) {
		t.Fatalf("completed with 3 out of sync: %+v", got)
	}
	got, changed := partitionAfterISRChange(p, []int32{2, 3, 1}, allEligible)
	want := Partition{Leader: 2, LeaderEpoch: 2, PartitionEpoch: 3, Replicas: []int32{2, 3}, ISR: []int32{2, 3}}
	if !changed || !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// The leader in the target keeps leading, at the same leader epoch.
	q := Partition{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}, AddingReplicas: []int32{2}, RemovingReplicas: []int32{3}}
	got, _ = partitionAfterISRChange(q, []int32{1, 2, 3}, allEligible)
	if want := (Partition{Leader: 1, PartitionEpoch: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// genInFlight draws a valid partition over brokers 1..5, perhaps with a
// reassignment in flight, and its leader in its ISR.
func genInFlight(t *rapid.T) Partition {
	ids := rapid.SliceOfNDistinct(rapid.Int32Range(1, 5), 1, 5, rapid.ID[int32])
	original := ids.Draw(t, "original")
	p := Partition{Replicas: original}
	if rapid.Bool().Draw(t, "in flight") {
		target := ids.Draw(t, "first target")
		p.Replicas = append(slices.Clone(target), without(original, target)...)
		p.RemovingReplicas = without(original, target)
		p.AddingReplicas = without(target, original)
	}
	isr := rapid.SliceOfNDistinct(rapid.SampledFrom(p.Replicas), 1, len(p.Replicas), rapid.ID[int32]).Draw(t, "isr")
	p.ISR = isrInReplicaOrder(isr, p.Replicas)
	p.Leader = rapid.SampledFrom(p.ISR).Draw(t, "leader")
	p.LeaderEpoch = base.Epoch(rapid.IntRange(0, 3).Draw(t, "leader epoch"))
	p.PartitionEpoch = int32(rapid.IntRange(0, 3).Draw(t, "partition epoch"))
	return completeReassignment(p, allEligible)
}

// TestReassignmentDecisionsProperties: starting (or replacing, or
// cancelling) a reassignment keeps the partition invariants, never
// elects outside the ISR, never adds to the ISR, never leaves a
// completable reassignment in flight, aims at the target asked for, and
// bumps the epochs as one partition change.
func TestReassignmentDecisionsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genInFlight(t)
		if err := validatePartitionState(p); err != nil {
			t.Fatalf("drawn %+v: %v", p, err)
		}
		fenced := rapid.SliceOfNDistinct(rapid.Int32Range(1, 5), 0, 2, rapid.ID[int32]).Draw(t, "fenced")
		eligible := func(r int32) bool { return !slices.Contains(fenced, r) }
		var (
			got     Partition
			changed bool
			err     error
			target  []int32
		)
		if rapid.IntRange(0, 3).Draw(t, "cancel") == 0 {
			target = originalReplicas(p)
			got, changed, err = cancelReassignment(p, eligible)
			if !p.Reassigning() {
				if !errors.Is(err, ErrNoReassignmentInProgress) {
					t.Fatalf("cancelling none: %v", err)
				}
				return
			}
		} else {
			target = rapid.SliceOfNDistinct(rapid.Int32Range(1, 5), 1, 5, rapid.ID[int32]).Draw(t, "target")
			got, changed, err = startReassignment(p, target, eligible)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidReplicaAssignment) || !p.Reassigning() {
				t.Fatalf("refused %+v → %v: %v", p, target, err)
			}
			return
		}
		checkReassignedPartition(t, p, got, changed, false)
		if !slices.Equal(got.TargetReplicas(), target) {
			t.Fatalf("%+v → %v: target %v", p, target, got.TargetReplicas())
		}
		for _, r := range got.ISR {
			if !slices.Contains(p.ISR, r) {
				t.Fatalf("%+v → %+v: %d joined the ISR", p, got, r)
			}
		}
	})
}

// checkReassignedPartition checks a partition change from p to got: the
// invariants hold, a new leader comes from p's ISR (or, with grown, from
// the ISR its leader asked for), nothing completable is left in flight,
// and the epochs moved as one change.
func checkReassignedPartition(t interface{ Fatalf(string, ...any) }, p, got Partition, changed, grown bool) {
	if err := validatePartitionState(got); err != nil {
		t.Fatalf("%+v → %+v: %v", p, got, err)
	}
	if got.Leader != p.Leader && got.Leader != NoLeader && !slices.Contains(p.ISR, got.Leader) && !grown {
		t.Fatalf("%+v → %+v: elected outside the ISR", p, got)
	}
	if got.Reassigning() && !reflect.DeepEqual(completeReassignment(got, allEligible), got) {
		t.Fatalf("%+v → %+v: a completable reassignment is left in flight", p, got)
	}
	if !changed {
		if !reflect.DeepEqual(got, p) {
			t.Fatalf("unchanged %+v → %+v", p, got)
		}
		return
	}
	wantLeaderEpoch := p.LeaderEpoch
	if got.Leader != p.Leader {
		wantLeaderEpoch++
	}
	if got.PartitionEpoch != p.PartitionEpoch+1 || got.LeaderEpoch != wantLeaderEpoch {
		t.Fatalf("%+v → %+v: epochs", p, got)
	}
}

// drawReassign draws a reassignment command aimed at img's partitions.
func drawReassign(t *rapid.T, img *Image, i int) command {
	label := func(s string) string { return fmt.Sprintf("%s%d", s, i) }
	var names []string
	for name := range img.Topics {
		names = append(names, name)
	}
	if len(names) == 0 {
		return &reassignPartitionCmd{TopicID: tid(1), Target: []int32{1}}
	}
	slices.Sort(names)
	tp := img.Topics[rapid.SampledFrom(names).Draw(t, label("topic"))]
	// Mostly a partition of the topic, and a valid target of registered
	// brokers; sometimes anything.
	c := &reassignPartitionCmd{TopicID: tp.ID, Partition: int32(rapid.IntRange(0, len(tp.Partitions)-1).Draw(t, label("partition")))}
	switch rapid.IntRange(0, 9).Draw(t, label("kind")) {
	case 0, 1:
		c.Cancel = true
	case 2:
		c.Partition = int32(rapid.IntRange(-1, len(tp.Partitions)).Draw(t, label("any partition")))
		c.Target = rapid.SliceOfN(rapid.Int32Range(-1, 5), 0, 4).Draw(t, label("any target"))
	default:
		ids := slices.Sorted(maps.Keys(img.Brokers))
		if len(ids) == 0 {
			ids = []int32{1, 2}
		}
		c.Target = rapid.SliceOfNDistinct(rapid.SampledFrom(ids), 1, 4, rapid.ID[int32]).Draw(t, label("target"))
		c.KeepReplicationFactor = rapid.IntRange(0, 5).Draw(t, label("keep")) == 0
	}
	return c
}

// TestReassignmentCommandsKeepInvariants applies random broker, topic,
// ISR and reassignment commands: every image keeps the invariants, no
// image holds a completable reassignment, a leader changes only to an
// ISR member with a new leader epoch, an ISR grows only by its leader's
// AlterPartition, and every command and image survives its codec.
func TestReassignmentCommandsKeepInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := emptyImage()
		applied := map[string]int{}
		for i := range rapid.IntRange(1, 80).Draw(t, "n") {
			var cmd command
			if rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("reassign%d", i)) == 0 {
				cmd = drawReassign(t, img, i)
			} else {
				cmd = genClusterCommand(t, img, i)
			}
			next, ok := applyDrawn(t, img, cmd, uint64(i+1), applied)
			if !ok {
				continue
			}
			for name, nt := range next.Topics {
				for j, np := range nt.Partitions {
					if np.Reassigning() {
						applied["(in flight)"]++
					}
					ot, ok := img.Topics[name]
					if !ok || j >= len(ot.Partitions) {
						if np.Reassigning() {
							t.Fatalf("new partition %s-%d in flight", name, j)
						}
						continue
					}
					op := ot.Partitions[j]
					_, isAlter := cmd.(*alterPartitionCmd)
					checkReassignedPartition(t, op, np, !reflect.DeepEqual(op, np), isAlter)
					if !isAlter {
						for _, r := range np.ISR {
							if !slices.Contains(op.ISR, r) {
								t.Fatalf("%s-%d: %d joined the ISR through %#v", name, j, r, cmd)
							}
						}
					}
					if op.Reassigning() && !np.Reassigning() && !slices.Equal(np.Replicas, op.TargetReplicas()) {
						if _, isCancel := cmd.(*reassignPartitionCmd); !isCancel {
							t.Fatalf("%s-%d completed to %v, not its target %v", name, j, np.Replicas, op.TargetReplicas())
						}
					}
				}
			}
			snap, err := encodeSnapshot(next)
			if err != nil {
				t.Fatal(err)
			}
			restored, err := decodeSnapshot(snap)
			if err != nil || !reflect.DeepEqual(restored, next) {
				t.Fatalf("snapshot round trip: %v\n got %#v\nwant %#v", err, restored, next)
			}
			img = next
		}
		t.Logf("applied: %v", applied)
	})
}

// TestReassignMoveCompletesThroughAlterPartition: moving a partition off
// its leader grows the replicas, the leader's ISR expansion completes
// it, and the leader steps down to a target replica.
func TestReassignMoveCompletesThroughAlterPartition(t *testing.T) {
	img := threeBrokers(t)
	img = applyChecked(t, img, &createTopicCmd{Name: "m", ID: tid(2), Assignments: [][]int32{{1}}}, nil)
	move := &reassignPartitionCmd{TopicID: tid(2), Target: []int32{2, 3}}
	applyChecked(t, img, &reassignPartitionCmd{TopicID: tid(2), Target: []int32{2, 9}}, ErrInvalidReplicaAssignment)
	applyChecked(t, img, &reassignPartitionCmd{TopicID: tid(2), Target: []int32{2, 2}}, ErrInvalidReplicaAssignment)
	applyChecked(t, img, &reassignPartitionCmd{TopicID: tid(2), Target: []int32{2, 3}, KeepReplicationFactor: true}, ErrInvalidReplicationFactor)
	applyChecked(t, img, &reassignPartitionCmd{TopicID: tid(2), Partition: 1, Target: []int32{2}}, ErrInvalidPartitions)
	applyChecked(t, img, &reassignPartitionCmd{TopicID: tid(9), Target: []int32{2}}, ErrUnknownTopic)
	applyChecked(t, img, &reassignPartitionCmd{TopicID: tid(2), Cancel: true}, ErrNoReassignmentInProgress)
	img = applyChecked(t, img, move, nil)
	// A cancellation that names a target says two things: refused, not
	// taken as either.
	applyChecked(t, img, &reassignPartitionCmd{TopicID: tid(2), Cancel: true, Target: []int32{2, 3}}, ErrInvalidCommand)
	p := partitionOf(img, "m", 0)
	want := Partition{Leader: 1, PartitionEpoch: 1, Replicas: []int32{2, 3, 1}, ISR: []int32{1},
		AddingReplicas: []int32{2, 3}, RemovingReplicas: []int32{1}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("started: %+v\nwant %+v", p, want)
	}
	if got := img.Reassignments(nil); len(got) != 1 || got[0].TP != (base.TopicPartition{Topic: "m"}) || !slices.Equal(got[0].Adding, []int32{2, 3}) {
		t.Errorf("listed %+v", got)
	}
	// The same target again changes nothing.
	if again := applyChecked(t, img, move, nil); !reflect.DeepEqual(partitionOf(again, "m", 0), p) {
		t.Errorf("the same target again: %+v", partitionOf(again, "m", 0))
	}
	alter := func(img *Image, isr ...int32) *Image {
		p := partitionOf(img, "m", 0)
		return applyChecked(t, img, &alterPartitionCmd{TopicID: tid(2), Leader: p.Leader, BrokerEpoch: img.Brokers[p.Leader].Epoch,
			LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr}, nil)
	}
	img = alter(img, 1, 2)
	if p := partitionOf(img, "m", 0); !p.Reassigning() || !slices.Equal(p.ISR, []int32{2, 1}) {
		t.Fatalf("one of two caught up: %+v", p)
	}
	img = alter(img, 1, 2, 3)
	want = Partition{Leader: 2, LeaderEpoch: 1, PartitionEpoch: 3, Replicas: []int32{2, 3}, ISR: []int32{2, 3}}
	if p := partitionOf(img, "m", 0); !reflect.DeepEqual(p, want) {
		t.Fatalf("completed: %+v\nwant %+v", p, want)
	}
	if got := img.Reassignments(nil); len(got) != 0 {
		t.Errorf("listed after completion: %+v", got)
	}
}

// TestSnapshotV5StillDecodes: a v5 snapshot restores; one holding a
// reassignment in flight is corrupt; a v6 one round-trips it.
func TestSnapshotV5StillDecodes(t *testing.T) {
	const topic = `"topics":[{"Name":"foo","ID":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1],"Partitions":[{"Index":0,"Leader":1,` +
		`"LeaderEpoch":2,"Replicas":[2,1],"ISR":[1]%s}],"Configs":null}]`
	v5 := "\x05{" + fmt.Sprintf(topic, "") + "}"
	img, err := decodeSnapshot([]byte(v5))
	if err != nil {
		t.Fatal(err)
	}
	if p := partitionOf(img, "foo", 0); p.Reassigning() || p.LeaderEpoch != 2 {
		t.Fatalf("decoded %+v", p)
	}
	inFlight := fmt.Sprintf(topic, `,"AddingReplicas":[2],"RemovingReplicas":[1]`)
	if _, err := decodeSnapshot([]byte("\x05{" + inFlight + "}")); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("v5 with a reassignment: %v, want ErrInvalidCommand", err)
	}
	img, err = decodeSnapshot([]byte("\x06{" + inFlight + "}"))
	if err != nil {
		t.Fatal(err)
	}
	if p := partitionOf(img, "foo", 0); !slices.Equal(p.AddingReplicas, []int32{2}) || !slices.Equal(p.RemovingReplicas, []int32{1}) {
		t.Fatalf("v6 decoded %+v", p)
	}
	data, err := encodeSnapshot(img)
	if err != nil || data[0] != snapshotFormatNewest {
		t.Fatalf("encoded as %d: %v", data[0], err)
	}
	if back, err := decodeSnapshot(data); err != nil || !reflect.DeepEqual(back, img) {
		t.Fatalf("round trip of the v6 image: %v", err)
	}
	for name, fields := range map[string]string{
		"removing not a tail":  `,"AddingReplicas":[2],"RemovingReplicas":[2]`,
		"adding outside":       `,"AddingReplicas":[3],"RemovingReplicas":[1]`,
		"empty adding":         `,"AddingReplicas":[],"RemovingReplicas":[1]`,
		"everything removed":   `,"RemovingReplicas":[2,1]`,
		"everything added":     `,"AddingReplicas":[2,1]`,
		"adding listed twice":  `,"AddingReplicas":[2,2],"RemovingReplicas":[1]`,
		"removing the isr too": `,"RemovingReplicas":[1,2]`,
	} {
		if _, err := decodeSnapshot([]byte("\x06{" + fmt.Sprintf(topic, fields) + "}")); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestAlterPartitionReassignments runs the Store methods on a node with
// three registered brokers: per-request answers, a cancel, and listing.
func TestAlterPartitionReassignments(t *testing.T) {
	s, _ := brokersStore(t, nil)
	t0 := base.TopicPartition{Topic: "t", Partition: 0}
	t1 := base.TopicPartition{Topic: "t", Partition: 1}
	errs := s.AlterPartitionReassignments(t.Context(), []Reassignment{
		{TP: t0, Replicas: []int32{1, 2}},        // a shrink: completes at once
		{TP: t1, Replicas: []int32{3, 4}},        // broker 4 is not registered
		{TP: t1, Replicas: nil},                  // nothing to cancel
		{TP: base.TopicPartition{Topic: "gone"}}, // no such topic
		{TP: base.TopicPartition{Topic: "t", Partition: 7}, Replicas: []int32{1}},
		{TP: t1, Replicas: []int32{3}, KeepReplicationFactor: true},
	})
	for i, want := range []error{nil, ErrInvalidReplicaAssignment, ErrNoReassignmentInProgress, ErrUnknownTopic, ErrInvalidPartitions, ErrInvalidReplicationFactor} {
		if !errors.Is(errs[i], want) || (want == nil) != (errs[i] == nil) {
			t.Errorf("request %d: %v, want %v", i, errs[i], want)
		}
	}
	if p := s.Image().Topics["t"].Partitions[0]; !slices.Equal(p.Replicas, []int32{1, 2}) || p.Reassigning() {
		t.Errorf("after the shrink: %+v", p)
	}
	// Broker 3 leaves the ISR of t-1; moving t-1 onto 3 stays in flight.
	p := s.Image().Topics["t"].Partitions[1]
	if _, err := s.AlterPartition(t.Context(), ISRChange{TopicID: s.Image().Topics["t"].ID, Partition: 1, Leader: 2,
		BrokerEpoch: s.Image().Brokers[2].Epoch, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: []int32{2, 1}}); err != nil {
		t.Fatal(err)
	}
	if errs := s.AlterPartitionReassignments(t.Context(), []Reassignment{{TP: t1, Replicas: []int32{3}}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	got := s.ListPartitionReassignments(nil)
	want := []ReassignmentState{{TP: t1, Replicas: []int32{3, 2, 1}, Removing: []int32{2, 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %+v\nwant %+v", got, want)
	}
	if got := s.ListPartitionReassignments([]base.TopicPartition{t0, {Topic: "gone"}}); len(got) != 0 {
		t.Errorf("listed t-0 and an unknown one: %+v", got)
	}
	if errs := s.AlterPartitionReassignments(t.Context(), []Reassignment{{TP: t1}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	// As in Kafka, the original replicas come back in the order of the
	// grown list: 3 was not removed, so it stays first.
	if p := s.Image().Topics["t"].Partitions[1]; !slices.Equal(p.Replicas, []int32{3, 2, 1}) || p.Reassigning() {
		t.Errorf("after the cancel: %+v", p)
	}
}
