package metadata

import (
	"errors"
	"fmt"
	"slices"
)

// Partition reassignment (KIP-455), as KRaft's ReplicationControlManager
// and PartitionReassignmentReplicas do it: a reassignment grows the
// replica set to the union of the target and the original replicas (the
// target first), so that the adding replicas are replicas like any other:
// brokers host them and follow the leader, and the leader takes them into
// the ISR once they caught up (AlterPartition). The partition change that
// leaves every adding replica in the ISR completes the reassignment: the
// replicas become the target, the removing ones leave the ISR, and a
// removed leader hands over to a target replica in the ISR. Deciding is
// pure (startReassignment, cancelReassignment, completeReassignment);
// reassignPartitionCmd carries the request and its apply decides against
// the image of the moment.

// ErrNoReassignmentInProgress: a cancellation of a partition with no
// reassignment in flight. Kafka's NO_REASSIGNMENT_IN_PROGRESS.
var ErrNoReassignmentInProgress = errors.New("metadata: no partition reassignment in progress")

// Reassigning reports whether a reassignment of p is in flight.
func (p Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// TargetReplicas is what p's replicas will be: those of the reassignment
// in flight, else its replicas. The result shares p's backing array.
func (p Partition) TargetReplicas() []int32 {
	return p.Replicas[:len(p.Replicas)-len(p.RemovingReplicas)]
}

// originalReplicas is what p's replicas were before the reassignment in
// flight (Kafka's revert): its replicas without the adding ones, in
// replica order. A fresh slice.
func originalReplicas(p Partition) []int32 {
	return without(p.Replicas, p.AddingReplicas)
}

// without is the members of list not in drop, in list order; nil when
// none is left.
func without(list, drop []int32) []int32 {
	var out []int32
	for _, r := range list {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

// validateReassignmentState checks the reassignment invariants of
// Partition; empty (non-nil) slices are refused too, so that an image
// and its snapshot never differ.
func validateReassignmentState(p Partition) error {
	adding, removing := p.AddingReplicas, p.RemovingReplicas
	if adding != nil && len(adding) == 0 || removing != nil && len(removing) == 0 {
		return fmt.Errorf("%w: empty adding or removing replicas", ErrInvalidReplicaAssignment)
	}
	if len(removing) >= len(p.Replicas) || !slices.Equal(removing, p.Replicas[len(p.Replicas)-len(removing):]) {
		return fmt.Errorf("%w: removing replicas %v are not a proper tail of replicas %v", ErrInvalidReplicaAssignment, removing, p.Replicas)
	}
	target := p.TargetReplicas()
	for i, r := range adding {
		if !slices.Contains(target, r) || slices.Contains(adding[:i], r) {
			return fmt.Errorf("%w: adding replicas %v not a set within target %v", ErrInvalidReplicaAssignment, adding, target)
		}
	}
	if len(adding) >= len(p.Replicas) {
		return fmt.Errorf("%w: every replica of %v is being added", ErrInvalidReplicaAssignment, p.Replicas)
	}
	return nil
}

// validateTarget checks a reassignment's target: a valid replica list
// (validateReplicas) of registered brokers, once any is registered.
// Fenced brokers may be named: they join the ISR only once unfenced and
// caught up, and the reassignment completes only then (Kafka's
// validateManualPartitionAssignment).
func validateTarget(img *Image, target []int32) error {
	if err := validateReplicas(target); err != nil {
		return err
	}
	if len(img.Brokers) == 0 {
		return nil
	}
	for _, r := range target {
		if _, ok := img.Brokers[r]; !ok {
			return fmt.Errorf("%w: replica %d is not a registered broker", ErrInvalidReplicaAssignment, r)
		}
	}
	return nil
}

// startReassignment is p once a reassignment to target (a valid,
// checked replica list) starts, and whether anything changed. A
// reassignment in flight is replaced: its adding replicas that target
// drops are reverted at once (they leave the replicas and the ISR), as a
// cancellation would. Otherwise the replicas become target followed by
// the original replicas target drops, the ISR keeps its members that stay
// replicas, and the reassignment completes at once if it can
// (completeReassignment). A leader that stops being a replica hands over
// to the first eligible ISR replica. It is refused with
// ErrInvalidReplicaAssignment when no ISR member would be left: leading
// then would take an unclean election.
func startReassignment(p Partition, target []int32, eligible func(int32) bool) (Partition, bool, error) {
	original := originalReplicas(p)
	removing := without(original, target)
	var adding []int32
	for _, r := range target {
		if !slices.Contains(original, r) {
			adding = append(adding, r)
		}
	}
	next := p
	next.Replicas = append(slices.Clone(target), removing...)
	next.AddingReplicas, next.RemovingReplicas = adding, removing
	next.ISR = isrInReplicaOrder(keepOnly(p.ISR, next.Replicas), next.Replicas)
	if len(p.ISR) == 0 {
		return p, false, fmt.Errorf("%w: no replica of %v is in sync (the last one lost its logs); elect a leader first (ElectLeaders UNCLEAN)",
			ErrInvalidReplicaAssignment, p.Replicas)
	}
	if len(next.ISR) == 0 {
		return p, false, fmt.Errorf("%w: every in-sync replica of %v is one being added that target %v drops; reverting it would take an unclean election",
			ErrInvalidReplicaAssignment, p.ISR, target)
	}
	if !slices.Contains(next.ISR, next.Leader) {
		next.Leader = electLeader(next.Replicas, next.ISR, eligible)
	}
	next = completeReassignment(next, eligible)
	np, changed := withEpochs(p, next)
	return np, changed, nil
}

// cancelReassignment is p with its reassignment in flight reverted
// (Kafka's PartitionReassignmentRevert): the adding replicas leave the
// replicas and the ISR, a leader among them hands over, and the original
// replicas stay, in replica order. It is refused with
// ErrNoReassignmentInProgress when none is in flight, and with
// ErrInvalidReplicaAssignment when every ISR member is an adding replica
// (Kafka reverts that with an unclean election where the topic enables
// unclean.leader.election.enable; Strata refuses it even then, so that
// no cancellation loses records: the reassignment can complete, or the
// operator elects uncleanly first).
func cancelReassignment(p Partition, eligible func(int32) bool) (Partition, bool, error) {
	if !p.Reassigning() {
		return p, false, fmt.Errorf("%w: replicas %v", ErrNoReassignmentInProgress, p.Replicas)
	}
	return startReassignment(p, originalReplicas(p), eligible)
}

// completeReassignment is p with its reassignment in flight completed,
// if it can be (Kafka's maybeCompleteReassignment): every adding replica
// is in the ISR, and some ISR member is not being removed. Then the
// replicas are the target, the ISR loses the removing replicas, and a
// leader that is not a target replica hands over to the first eligible
// one in the ISR (there is one: an ISR of several members holds no fenced
// broker). Epochs are left to the caller (withEpochs); p is returned as
// is otherwise.
func completeReassignment(p Partition, eligible func(int32) bool) Partition {
	if !p.Reassigning() {
		return p
	}
	isr := without(p.ISR, p.RemovingReplicas)
	for _, r := range p.AddingReplicas {
		if !slices.Contains(isr, r) {
			return p
		}
	}
	if len(isr) == 0 {
		return p
	}
	next := p
	next.Replicas = slices.Clone(p.TargetReplicas())
	next.ISR = isr
	next.AddingReplicas, next.RemovingReplicas = nil, nil
	if !slices.Contains(isr, next.Leader) {
		next.Leader = electLeader(next.Replicas, isr, eligible)
	}
	return next
}

// partitionAfterISRChange is p with the ISR isr (from its leader's
// AlterPartition), completing a reassignment it allows.
func partitionAfterISRChange(p Partition, isr []int32, eligible func(int32) bool) (Partition, bool) {
	next := p
	next.ISR = isr
	return withEpochs(p, completeReassignment(next, eligible))
}

// keepOnly is the members of list in keep, in list order.
func keepOnly(list, keep []int32) []int32 {
	var out []int32
	for _, r := range list {
		if slices.Contains(keep, r) {
			out = append(out, r)
		}
	}
	return out
}

// withEpochs is next stamped with the epochs that follow p's, as one
// partition change (Kafka's PartitionChangeRecord): the partition epoch
// grows by one, the leader epoch by one if the leader changed. changed is
// false, and p returned as is, when next assigns p's replicas, ISR,
// leader and reassignment.
func withEpochs(p, next Partition) (Partition, bool) {
	if next.Leader == p.Leader && slices.Equal(next.ISR, p.ISR) && slices.Equal(next.Replicas, p.Replicas) &&
		slices.Equal(next.AddingReplicas, p.AddingReplicas) && slices.Equal(next.RemovingReplicas, p.RemovingReplicas) {
		return p, false
	}
	next.LeaderEpoch, next.PartitionEpoch = p.LeaderEpoch, p.PartitionEpoch+1
	if next.Leader != p.Leader {
		next.LeaderEpoch++
	}
	return next, true
}
