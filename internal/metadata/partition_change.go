package metadata

import "slices"

// The controller's partition decisions, as pure functions of a partition's
// state and the eligibility of brokers (Kafka's PartitionChangeBuilder). Each
// returns the changed partition and whether anything changed; a change bumps
// PartitionEpoch, and a change of leader bumps LeaderEpoch too.

// electLeader picks the first replica, in assignment order, that is in the
// ISR and eligible; NoLeader when there is none. A replica outside the ISR
// could lack acknowledged records: only an operator's UNCLEAN election
// (uncleanElection) picks one.
func electLeader(replicas, isr []int32, eligible func(int32) bool) int32 {
	for _, r := range replicas {
		if slices.Contains(isr, r) && eligible(r) {
			return r
		}
	}
	return NoLeader
}

// withLeaderAndISR returns p with leader and isr, bumping the epochs as
// Kafka does; changed is false (and p returned as is) when both are equal.
func withLeaderAndISR(p Partition, leader int32, isr []int32) (Partition, bool) {
	if leader == p.Leader && slices.Equal(isr, p.ISR) {
		return p, false
	}
	next := p
	next.ISR = isr
	if leader != p.Leader {
		next.Leader = leader
		next.LeaderEpoch++
	}
	next.PartitionEpoch++
	return next, true
}

// partitionAfterFence is p once broker b is fenced (eligible already says
// b is not): b leaves the ISR, unless it is the last member (Kafka keeps
// the last in-sync replica, so the partition can come back with it and
// nothing acknowledged is lost); if b led, the first eligible ISR replica
// leads, else nobody (NoLeader). A fence never completes a reassignment
// in flight (completeReassignment): it only takes a member out of an ISR.
func partitionAfterFence(p Partition, b int32, eligible func(int32) bool) (Partition, bool) {
	if p.Leader != b && !slices.Contains(p.ISR, b) {
		return p, false
	}
	isr := slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == b })
	if len(isr) == 0 {
		isr = []int32{b}
	}
	leader := p.Leader
	if leader == b || leader == NoLeader {
		leader = electLeader(p.Replicas, isr, eligible)
	}
	return withLeaderAndISR(p, leader, isr)
}

// partitionAfterUnfence is p once broker b is eligible again: a partition
// without a leader whose ISR holds b gets one.
func partitionAfterUnfence(p Partition, b int32, eligible func(int32) bool) (Partition, bool) {
	if p.Leader != NoLeader || !slices.Contains(p.ISR, b) {
		return p, false
	}
	return withLeaderAndISR(p, electLeader(p.Replicas, p.ISR, eligible), p.ISR)
}

// partitionAfterLogLoss is p once broker b came back without its logs:
// where b was the only in-sync replica (and so, fenced, left p without a
// leader), nobody holds what the ISR held any more, and the ISR is empty;
// the partition has no leader until an operator's UNCLEAN election
// (uncleanElection), rather than b leading with an empty log. Where b was
// one of several, fencing it took it out already.
func partitionAfterLogLoss(p Partition, b int32) (Partition, bool) {
	if !slices.Equal(p.ISR, []int32{b}) || p.Leader != NoLeader {
		return p, false
	}
	return withLeaderAndISR(p, NoLeader, []int32{})
}

// initialPartition builds a newly created partition from its replica list:
// the ISR is the eligible replicas, in assignment order, led by the first.
// ok is false when no replica is eligible.
func initialPartition(index int32, replicas []int32, eligible func(int32) bool) (Partition, bool) {
	var isr []int32
	for _, r := range replicas {
		if eligible(r) {
			isr = append(isr, r)
		}
	}
	if len(isr) == 0 {
		return Partition{}, false
	}
	return Partition{
		Index:    index,
		Leader:   isr[0],
		Replicas: slices.Clone(replicas),
		ISR:      isr,
	}, true
}

// isrInReplicaOrder returns isr sorted by position in replicas, the order
// Strata keeps every ISR in. Members outside replicas sort last.
func isrInReplicaOrder(isr, replicas []int32) []int32 {
	out := slices.Clone(isr)
	pos := func(r int32) int {
		if i := slices.Index(replicas, r); i >= 0 {
			return i
		}
		return len(replicas)
	}
	slices.SortStableFunc(out, func(a, b int32) int { return pos(a) - pos(b) })
	return out
}
