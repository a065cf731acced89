package reconcile

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// State is a member's reconciliation state, with Kafka's persisted values
// (ConsumerGroupCurrentMemberAssignmentValue.State).
type State int8

const (
	UnrevokedPartitions  State = 0
	UnreleasedPartitions State = 1
	Stable               State = 2
	Unknown              State = 127
)

func (s State) String() string {
	switch s {
	case UnrevokedPartitions:
		return "unrevoked_partitions"
	case UnreleasedPartitions:
		return "unreleased_partitions"
	case Stable:
		return "stable"
	}
	return "unknown"
}

// StateOf reads a persisted state: a value this code does not know is
// Unknown.
func StateOf(b int8) State {
	switch s := State(b); s {
	case UnrevokedPartitions, UnreleasedPartitions, Stable:
		return s
	}
	return Unknown
}

// Member is what reconciliation knows of one member.
type Member struct {
	Epoch         int32
	PreviousEpoch int32
	State         State
	// Assigned is what the member has been given (and may consume).
	Assigned assignor.Assignment
	// PendingRevocation is what it has been asked to give back: still its
	// own until its heartbeat stops reporting them.
	PendingRevocation assignor.Assignment
}

// withEpoch is m moved to epoch, remembering the one it leaves (Kafka's
// updateMemberEpoch).
func (m Member) withEpoch(epoch int32) Member {
	m.PreviousEpoch, m.Epoch = m.Epoch, epoch
	return m
}

// Input is what one reconciliation step knows besides the member.
type Input struct {
	TargetEpoch int32
	// Target is the member's target assignment.
	Target assignor.Assignment
	// Subscribed reports whether the member subscribes to a topic now;
	// the target of a topic it does not is taken as empty.
	Subscribed func(base.TopicID) bool
	// SubscriptionChanged: this heartbeat changed the subscription.
	SubscriptionChanged bool
	// Owned is what the heartbeat reported the member owns, if
	// OwnedReported (a heartbeat may leave it out).
	Owned         assignor.Assignment
	OwnedReported bool
	// PartitionEpoch is the epoch of the member holding a partition
	// (assigned or pending revocation), -1 when none does.
	PartitionEpoch func(topic base.TopicID, partition int32) int32
}

// ownsAnyOf reports whether the heartbeat reported owning a partition of
// a; a heartbeat that reported nothing may still own everything.
func (in Input) ownsAnyOf(a assignor.Assignment) bool {
	if !in.OwnedReported {
		return true
	}
	for t, ps := range in.Owned {
		for _, p := range ps {
			if a.Contains(t, p) {
				return true
			}
		}
	}
	return false
}
