package broker

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// reassign starts (or, with replicas nil, cancels) the reassignment of
// tp through the quorum and reconciles.
func (f *replicationFixture) reassign(tp base.TopicPartition, replicas ...int32) {
	f.t.Helper()
	if errs := f.meta.AlterPartitionReassignments(f.t.Context(), []metadata.Reassignment{{TP: tp, Replicas: replicas}}); errs[0] != nil {
		f.t.Fatalf("reassigning %v to %v: %v", tp, replicas, errs[0])
	}
	f.reconcile()
}

// alterISRAs is the ISR change that leader (played by the test) asks for.
func (f *replicationFixture) alterISRAs(tp base.TopicPartition, leader int32, isr ...int32) {
	f.t.Helper()
	pa := f.imagePartition(tp)
	if _, err := f.meta.AlterPartition(f.t.Context(), metadata.ISRChange{TopicID: f.meta.Image().Topics[tp.Topic].ID,
		Partition: tp.Partition, Leader: leader, BrokerEpoch: f.epochs[leader], LeaderEpoch: pa.LeaderEpoch,
		PartitionEpoch: pa.PartitionEpoch, ISR: isr}); err != nil {
		f.t.Fatal(err)
	}
	f.reconcile()
}

// TestReassignmentAddsAndRemovesReplicasHere: a reassignment that adds
// this node makes it host the partition and follow the leader, and lead
// once the move completes; one that removes it (as leader or follower)
// ends its role and deletes its data once the move completes, not
// before. No broker code knows of reassignments: a replica is a replica.
func TestReassignmentAddsAndRemovesReplicasHere(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("moving", []int32{2}, []int32{2, 1}, []int32{1, 2})
	onto := base.TopicPartition{Topic: "moving", Partition: 0}
	offFollower := base.TopicPartition{Topic: "moving", Partition: 1}
	offLeader := base.TopicPartition{Topic: "moving", Partition: 2}
	if f.isHosted(onto) {
		t.Fatalf("%v hosted before it is assigned here", onto)
	}
	f.follows.take()
	f.leads.take()

	// Onto this node: hosted and following 2 while it catches up.
	f.reassign(onto, 1)
	if p := f.hosted(onto); p.IsLeader() {
		t.Fatalf("%v leads while it is being added", onto)
	}
	if got, want := f.follows.take(), f.followCalls(onto); !sameCalls(got, want) {
		t.Fatalf("adding, Followers heard %v, want %v", got, want)
	}
	f.alterISRAs(onto, 2, 2, 1) // 2 takes it into the ISR: the move completes
	if pa := f.imagePartition(onto); pa.Leader != 1 || !slices.Equal(pa.Replicas, []int32{1}) || pa.Reassigning() {
		t.Fatalf("after the move: %+v", pa)
	}
	if p := f.hosted(onto); !p.IsLeader() || p.Offsets().LeaderEpoch != 1 {
		t.Fatalf("%v after the move: leader %v in epoch %d", onto, p.IsLeader(), p.Offsets().LeaderEpoch)
	}
	if got, want := f.follows.take(), []string{"unfollow moving-0"}; !sameCalls(got, want) {
		t.Fatalf("after the move, Followers heard %v, want %v", got, want)
	}

	// Off this follower: it keeps following while 3 catches up.
	dir := f.b.partitionDir(offFollower)
	f.reassign(offFollower, 2, 3)
	if !f.isHosted(offFollower) || f.hosted(offFollower).IsLeader() {
		t.Fatalf("%v stopped being followed here before the move completed", offFollower)
	}
	f.alterISRAs(offFollower, 2, 2, 3, 1)
	if f.isHosted(offFollower) {
		t.Fatalf("%v still hosted after the move", offFollower)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data of %v is still there: %v", offFollower, err)
	}
	if got, want := f.follows.take(), []string{"unfollow moving-1"}; !sameCalls(got, want) {
		t.Fatalf("moving off the follower, Followers heard %v, want %v", got, want)
	}

	// Off this leader: 2 is in the ISR already, so the move completes at
	// once and this node resigns (OnClose) and deletes its copy.
	appendRecords(t, f.hosted(offLeader), 3)
	dir = f.b.partitionDir(offLeader)
	f.leads.take()
	f.reassign(offLeader, 2)
	if pa := f.imagePartition(offLeader); pa.Leader != 2 || !slices.Equal(pa.ISR, []int32{2}) {
		t.Fatalf("after moving off the leader: %+v", pa)
	}
	if f.isHosted(offLeader) {
		t.Fatalf("%v still hosted after the move", offLeader)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data of %v is still there: %v", offLeader, err)
	}
	if got, want := f.leads.take(), []string{"close moving-2"}; !sameCalls(got, want) {
		t.Fatalf("moving off the leader, OnOpen/OnClose heard %v, want %v", got, want)
	}
}

// TestReassignmentGrowsTheISRThroughTheLeader: growing a partition led
// here onto broker 3 gives the leader a follower state for 3; once 3 has
// fetched everything the leader takes it into the ISR, and that ISR
// change completes the reassignment.
func TestReassignmentGrowsTheISRThroughTheLeader(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	tp, p := f.createLed("grow", 1)
	appendRecords(t, p, 4)
	f.reassign(tp, 1, 3)
	if pa := f.imagePartition(tp); !slices.Equal(pa.AddingReplicas, []int32{3}) || !slices.Equal(pa.ISR, []int32{1}) {
		t.Fatalf("started: %+v", pa)
	}
	f.mustFetch(tp, 3, 0, -1)
	f.mustFetch(tp, 3, 4, 0)
	pa := f.awaitISR(tp, 1, 3)
	if pa.Reassigning() || !slices.Equal(pa.Replicas, []int32{1, 3}) || pa.Leader != 1 {
		t.Fatalf("after 3 caught up: %+v", pa)
	}
	if !p.IsLeader() || p.Offsets().HighWatermark != 4 {
		t.Fatalf("leader %v, high watermark %d", p.IsLeader(), p.Offsets().HighWatermark)
	}
}

// TestReassignmentKeepsWhatTheLeaderKnows: a replica added to a partition
// led here with followers gets a follower state of its own, and the
// followers that stay keep theirs: 2's fetch before the move still counts
// for the high watermark after it.
func TestReassignmentKeepsWhatTheLeaderKnows(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	tp, p := f.createLed("widen", 1, 2)
	appendRecords(t, p, 4)
	f.mustFetch(tp, 2, 4, 0)
	f.reassign(tp, 1, 2, 3)
	f.mustFetch(tp, 3, 0, -1)
	f.mustFetch(tp, 3, 4, 0)
	pa := f.awaitISR(tp, 1, 2, 3)
	if pa.Reassigning() || !slices.Equal(pa.Replicas, []int32{1, 2, 3}) {
		t.Fatalf("after 3 caught up: %+v", pa)
	}
	if lw, err := f.b.LowWatermark(p); err != nil || lw != 0 {
		t.Fatalf("low watermark %d, %v; want 0: every follower has fetched", lw, err)
	}
	appendRecords(t, p, 2)
	f.mustFetch(tp, 3, 6, 0)
	if hw := p.Offsets().HighWatermark; hw != 4 {
		t.Fatalf("high watermark %d, want 4: 2 has fetched only that far", hw)
	}
}

// TestReassignmentToTheLeaderAlone: a partition led here that a
// reassignment leaves with this node alone commits its appends by itself,
// as a single replica does, and serves no follower.
func TestReassignmentToTheLeaderAlone(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	tp, p := f.createLed("narrow", 1, 2)
	appendRecords(t, p, 2)
	f.mustFetch(tp, 2, 2, 0)
	f.reassign(tp, 1)
	if pa := f.imagePartition(tp); pa.Reassigning() || !slices.Equal(pa.Replicas, []int32{1}) {
		t.Fatalf("after the move: %+v", pa)
	}
	appendRecords(t, p, 1)
	if off := p.Offsets(); off.HighWatermark != off.LogEnd || off.LogEnd != 3 {
		t.Fatalf("alone, offsets %+v; want the high watermark at the log end, 3", off)
	}
	if _, err := f.fetch(tp, 2, 3, 0); !errors.Is(err, ErrNotReplica) {
		t.Fatalf("a fetch by the removed replica: %v, want ErrNotReplica", err)
	}
}
