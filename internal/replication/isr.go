package replication

import (
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// OutOfSync lists the ISR members that the leader should remove, sorted
// ascending, as Kafka's Partition.getOutOfSyncReplicas: every member but the
// leader that is not caught up (Follower.CaughtUp): its log end differs from
// leaderEnd and it has not been caught up for more than lagMaxMs
// (replica.lag.time.max.ms). That covers a stuck follower, whose fetches
// stopped, and a slow one, whose fetches never reach the leader's end. An
// ISR member the leader has no state for is out of sync.
//
// Kafka proposes no shrink while an ISR change is in flight; the caller
// does not call OutOfSync then.
func OutOfSync(isr []int32, leaderID int32, followers []Follower, leaderEnd base.Offset, nowMs, lagMaxMs int64) []int32 {
	var out []int32
	for _, id := range isr {
		if id == leaderID {
			continue
		}
		f, ok := findFollower(followers, id)
		if !ok || !f.CaughtUp(leaderEnd, nowMs, lagMaxMs) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CanJoinISR is Kafka's Partition.isFollowerInSync with
// canAddReplicaToIsr's eligibility: a follower outside the ISR may join once
// its log end is at or past the high watermark and at or past the start of
// the leader's current epoch, and its broker is eligible (IsrEligible:
// registered, unfenced, not shutting down, the fetch's broker epoch
// current; KIP-841, KIP-903).
//
// The epoch condition matters: data below the leader's epoch start may be
// committed already although this leader's high watermark has not caught up
// with it yet; a follower that joined without that data could be elected
// and lose it. Like Kafka, only the high watermark is
// checked, not the lag time, to agree with how a follower judges itself.
// The caller checks that the follower is not in the ISR yet and that no
// ISR change is in flight.
func CanJoinISR(f Follower, hw, leaderEpochStart base.Offset, eligible bool) bool {
	return eligible && f.Fetched && f.LogEnd >= hw && f.LogEnd >= leaderEpochStart
}

// ShrinkISR is the ISR the leader proposes to the controller after removing
// outOfSync (Kafka's Partition.prepareIsrShrink): isr without them, in
// replica order (InReplicaOrder). The leader is never removed, even if
// listed.
func ShrinkISR(replicas, isr []int32, leaderID int32, outOfSync []int32) []int32 {
	next := make([]int32, 0, len(isr))
	for _, id := range isr {
		if id == leaderID || !slices.Contains(outOfSync, id) {
			next = append(next, id)
		}
	}
	return InReplicaOrder(next, replicas)
}

// ExpandISR is the ISR the leader proposes to the controller when follower
// id joins (Kafka's Partition.prepareIsrExpand): isr plus id, in replica
// order (InReplicaOrder). Adding a member that is already there changes
// nothing.
func ExpandISR(replicas, isr []int32, id int32) []int32 {
	next := slices.Clone(isr)
	if !slices.Contains(next, id) {
		next = append(next, id)
	}
	return InReplicaOrder(next, replicas)
}

// InReplicaOrder is isr, without duplicates, ordered by position in replicas:
// the order Strata keeps every ISR in (the controller's too), so that two
// ISRs holding the same brokers compare equal. Kafka keeps the ISR as a set
// on the leader; members outside replicas, which the ISR ⊆ replicas
// invariant forbids, sort last in ascending id order. The result is a new
// slice.
func InReplicaOrder(isr, replicas []int32) []int32 {
	out := slices.Clone(isr)
	slices.Sort(out)
	out = slices.Compact(out)
	pos := func(id int32) int {
		if i := slices.Index(replicas, id); i >= 0 {
			return i
		}
		return len(replicas)
	}
	slices.SortStableFunc(out, func(a, b int32) int { return pos(a) - pos(b) })
	return out
}
