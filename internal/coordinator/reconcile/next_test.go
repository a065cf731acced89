package reconcile

import (
	"errors"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

var (
	tA = base.TopicID{1}
	tB = base.TopicID{2}
)

// parts is topic's partitions ps as an Assignment.
func parts(topic base.TopicID, ps ...int32) assignor.Assignment {
	if len(ps) == 0 {
		return assignor.Assignment{}
	}
	return assignor.Assignment{topic: ps}
}

// merged is the union of assignments of distinct topics.
func merged(as ...assignor.Assignment) assignor.Assignment {
	out := assignor.Assignment{}
	for _, a := range as {
		for t, ps := range a {
			out[t] = ps
		}
	}
	return out
}

func subscribedTo(ts ...base.TopicID) func(base.TopicID) bool {
	return func(t base.TopicID) bool {
		for _, s := range ts {
			if s == t {
				return true
			}
		}
		return false
	}
}

// heldBy says the partitions of held are another member's (epoch 9), all
// else free.
func heldBy(held assignor.Assignment) func(base.TopicID, int32) int32 {
	return func(t base.TopicID, p int32) int32 {
		if held.Contains(t, p) {
			return 9
		}
		return -1
	}
}

func member(state State, epoch, prev int32, assigned, pending assignor.Assignment) Member {
	return Member{Epoch: epoch, PreviousEpoch: prev, State: state, Assigned: assigned, PendingRevocation: pending}
}

func sameMember(a, b Member) bool {
	return a.Epoch == b.Epoch && a.PreviousEpoch == b.PreviousEpoch && a.State == b.State &&
		a.Assigned.Equal(b.Assigned) && a.PendingRevocation.Size() == b.PendingRevocation.Size() &&
		(a.PendingRevocation.Size() == 0 || a.PendingRevocation.Equal(b.PendingRevocation))
}

func TestNext(t *testing.T) {
	none := assignor.Assignment{}
	both := subscribedTo(tA, tB)
	owns := func(a assignor.Assignment) Input { return Input{Owned: a, OwnedReported: true} }
	for _, tc := range []struct {
		name    string
		m       Member
		in      Input // TargetEpoch, Target, Subscribed (both when nil) and PartitionEpoch (all free when nil) added below
		epoch   int32
		target  assignor.Assignment
		held    assignor.Assignment
		want    Member
		wantErr error
	}{
		{name: "stable at the target stays",
			m: member(Stable, 3, 2, parts(tA, 0, 1), none), in: owns(parts(tA, 0, 1)), epoch: 3, target: parts(tA, 0, 1, 2),
			want: member(Stable, 3, 2, parts(tA, 0, 1), none)},
		{name: "free partitions are given at the target epoch",
			m: member(Stable, 3, 2, parts(tA, 0), none), in: owns(parts(tA, 0)), epoch: 5, target: merged(parts(tA, 0, 1), parts(tB, 4)),
			want: member(Stable, 5, 3, merged(parts(tA, 0, 1), parts(tB, 4)), none)},
		{name: "partitions it still owns are revoked first, at its epoch",
			m: member(Stable, 3, 2, parts(tA, 0, 1, 2), none), in: owns(parts(tA, 0, 1, 2)), epoch: 5, target: merged(parts(tA, 0), parts(tB, 7)),
			want: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1, 2))},
		{name: "partitions it no longer reports are dropped at once",
			m: member(Stable, 3, 2, parts(tA, 0, 1, 2), none), in: owns(parts(tA, 0)), epoch: 5, target: merged(parts(tA, 0), parts(tB, 7)),
			want: member(Stable, 5, 3, merged(parts(tA, 0), parts(tB, 7)), none)},
		{name: "a heartbeat without owned partitions may own them all",
			m: member(Stable, 3, 2, parts(tA, 0, 1), none), in: Input{}, epoch: 5, target: parts(tA, 0),
			want: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1))},
		{name: "a partition another member holds waits",
			m: member(Stable, 3, 2, parts(tA, 0), none), in: owns(parts(tA, 0)), epoch: 5, target: parts(tA, 0, 1, 2), held: parts(tA, 2),
			want: member(UnreleasedPartitions, 5, 3, parts(tA, 0, 1), none)},
		{name: "only held partitions: unreleased with what it has",
			m: member(Stable, 3, 2, parts(tA, 0), none), in: owns(parts(tA, 0)), epoch: 5, target: parts(tA, 0, 2), held: parts(tA, 2),
			want: member(UnreleasedPartitions, 5, 3, parts(tA, 0), none)},
		{name: "unreleased gets the partition once it is free",
			m: member(UnreleasedPartitions, 5, 3, parts(tA, 0, 1), none), in: owns(parts(tA, 0, 1)), epoch: 5, target: parts(tA, 0, 1, 2),
			want: member(Stable, 5, 5, parts(tA, 0, 1, 2), none)},
		{name: "unreleased still waiting stays at the target epoch",
			m: member(UnreleasedPartitions, 5, 3, parts(tA, 0, 1), none), in: owns(parts(tA, 0, 1)), epoch: 5, target: parts(tA, 0, 1, 2), held: parts(tA, 2),
			want: member(UnreleasedPartitions, 5, 5, parts(tA, 0, 1), none)},
		{name: "unrevoked waits while it reports a revoked partition",
			m: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1)), in: owns(parts(tA, 0, 1)), epoch: 5, target: merged(parts(tA, 0), parts(tB, 7)),
			want: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1))},
		{name: "unrevoked waits for a heartbeat that reports",
			m: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1)), in: Input{}, epoch: 5, target: parts(tA, 0),
			want: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1))},
		{name: "revoked: on to the next epoch with the new partitions",
			m: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1)), in: owns(parts(tA, 0)), epoch: 4, target: merged(parts(tA, 0), parts(tB, 7)),
			want: member(Stable, 4, 3, merged(parts(tA, 0), parts(tB, 7)), none)},
		{name: "revoked: a partition it was revoking and is given back is its own",
			m: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tA, 1)), in: owns(parts(tA, 0)), epoch: 4, target: parts(tA, 0, 1), held: parts(tA, 1),
			want: member(Stable, 4, 3, parts(tA, 0, 1), none)},
		{name: "a topic it does not subscribe to is revoked whatever the target",
			m: member(Stable, 3, 2, merged(parts(tA, 0), parts(tB, 1)), none), in: Input{Owned: merged(parts(tA, 0), parts(tB, 1)), OwnedReported: true, Subscribed: subscribedTo(tA)},
			epoch: 5, target: merged(parts(tA, 0), parts(tB, 1)),
			want: member(UnrevokedPartitions, 3, 3, parts(tA, 0), parts(tB, 1))},
		{name: "a subscription change at the target epoch revokes the topic",
			m: member(Stable, 5, 4, merged(parts(tA, 0), parts(tB, 1)), none), in: Input{Owned: merged(parts(tA, 0), parts(tB, 1)), OwnedReported: true, Subscribed: subscribedTo(tA), SubscriptionChanged: true},
			epoch: 5, target: merged(parts(tA, 0), parts(tB, 1)),
			want: member(UnrevokedPartitions, 5, 4, parts(tA, 0), parts(tB, 1))},
		{name: "a subscription change drops a topic it no longer reports",
			m: member(Stable, 5, 4, merged(parts(tA, 0), parts(tB, 1)), none), in: Input{Owned: parts(tA, 0), OwnedReported: true, Subscribed: subscribedTo(tA), SubscriptionChanged: true},
			epoch: 5, target: merged(parts(tA, 0), parts(tB, 1)),
			want: member(Stable, 5, 4, parts(tA, 0), none)},
		{name: "revoked after a subscription change: the epoch stays at the target",
			m: member(UnrevokedPartitions, 5, 4, parts(tA, 0), parts(tB, 1)), in: Input{Owned: parts(tA, 0), OwnedReported: true, Subscribed: subscribedTo(tA)},
			epoch: 5, target: merged(parts(tA, 0), parts(tB, 1)),
			want: member(Stable, 5, 5, parts(tA, 0), none)},
		{name: "revoked after a subscription change, more to revoke: the epoch never passes the target",
			m: member(UnrevokedPartitions, 5, 4, parts(tA, 0), parts(tB, 1)), in: Input{Owned: parts(tA, 0), OwnedReported: true, Subscribed: subscribedTo()},
			epoch: 5, target: merged(parts(tA, 0), parts(tB, 1)),
			want: member(UnrevokedPartitions, 5, 5, none, parts(tA, 0))},
		{name: "unknown state owning nothing restarts from the target",
			m: member(Unknown, 3, 2, parts(tA, 0), none), in: owns(none), epoch: 5, target: parts(tA, 1),
			want: member(Stable, 5, 3, parts(tA, 1), none)},
		{name: "unknown state owning partitions is fenced",
			m: member(Unknown, 3, 2, parts(tA, 0), none), in: owns(parts(tA, 0)), epoch: 5, target: parts(tA, 1), wantErr: ErrFencedMemberEpoch},
		{name: "unknown state not saying is fenced",
			m: member(Unknown, 3, 2, parts(tA, 0), none), in: Input{}, epoch: 5, target: parts(tA, 1), wantErr: ErrFencedMemberEpoch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.TargetEpoch, in.Target, in.PartitionEpoch = tc.epoch, tc.target, heldBy(tc.held)
			if in.Subscribed == nil {
				in.Subscribed = both
			}
			got, err := Next(tc.m, in)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Next: %v, want %v", err, tc.wantErr)
			}
			if err == nil && !sameMember(got, tc.want) {
				t.Fatalf("Next:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestCheckEpoch(t *testing.T) {
	m := member(Stable, 5, 3, parts(tA, 0, 1), assignor.Assignment{})
	for _, tc := range []struct {
		name     string
		epoch    int32
		owned    assignor.Assignment
		reported bool
		ok       bool
	}{
		{"its epoch", 5, parts(tA, 0, 1, 2), true, true},
		{"its epoch, owned not said", 5, nil, false, true},
		{"a greater epoch", 6, parts(tA, 0), true, false},
		{"the previous epoch owning part of its partitions", 3, parts(tA, 1), true, true},
		{"the previous epoch owning nothing", 3, assignor.Assignment{}, true, true},
		{"the previous epoch owning another partition", 3, parts(tA, 0, 2), true, false},
		{"the previous epoch, owned not said", 3, nil, false, false},
		{"an older epoch", 2, parts(tA, 0), true, false},
	} {
		err := CheckEpoch(m, tc.epoch, tc.owned, tc.reported)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrFencedMemberEpoch)) {
			t.Errorf("%s: CheckEpoch = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestStateOf(t *testing.T) {
	for b, want := range map[int8]State{0: UnrevokedPartitions, 1: UnreleasedPartitions, 2: Stable, 3: Unknown, 127: Unknown, -1: Unknown} {
		if got := StateOf(b); got != want {
			t.Errorf("StateOf(%d) = %v, want %v", b, got, want)
		}
	}
}
