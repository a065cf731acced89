package metadata

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-broker/strata/internal/base"
)

// reassignPartitionCmd starts, replaces or (Cancel) cancels the
// reassignment of one partition (Kafka's PartitionChangeRecord of an
// AlterPartitionReassignments). Apply decides against the image it
// applies to (startReassignment, cancelReassignment), so a request
// planned against an older image gets the answer of the current one.
type reassignPartitionCmd struct {
	TopicID   base.TopicID `json:"topic_id"`
	Partition int32        `json:"partition"`
	// Target is the replica list asked for; empty with Cancel.
	Target []int32 `json:"target"`
	Cancel bool    `json:"cancel,omitempty"`
	// KeepReplicationFactor refuses a Target whose size is not the
	// partition's replication factor (KIP-860).
	KeepReplicationFactor bool `json:"keep_replication_factor,omitempty"`
}

func (*reassignPartitionCmd) isCommand() {}

func applyReassignPartition(img *Image, c *reassignPartitionCmd, index uint64) (*Image, error) {
	if c.Cancel && len(c.Target) > 0 {
		return nil, fmt.Errorf("%w: a cancellation with target %v", ErrInvalidCommand, c.Target)
	}
	t, p, err := lookupPartitionByID(img, c.TopicID, c.Partition)
	if err != nil {
		return nil, err
	}
	next, changed, err := reassignmentOf(img, p, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", base.TopicPartition{Topic: t.Name, Partition: c.Partition}, err)
	}
	if !changed {
		return img.with(index), nil
	}
	parts := slices.Clone(t.Partitions)
	parts[c.Partition] = next
	grown := *t
	grown.Partitions = parts
	return img.withTopic(&grown, index), nil
}

// reassignmentOf is p after c, in img: the decision apply takes, and the
// check a proposer makes before proposing.
func reassignmentOf(img *Image, p Partition, c *reassignPartitionCmd) (Partition, bool, error) {
	if c.Cancel {
		return cancelReassignment(p, img.Eligible)
	}
	if err := validateTarget(img, c.Target); err != nil {
		return p, false, err
	}
	if rf := len(p.TargetReplicas()); c.KeepReplicationFactor && len(c.Target) != rf {
		return p, false, fmt.Errorf("%w: the replication factor would change from %d to %d", ErrInvalidReplicationFactor, rf, len(c.Target))
	}
	return startReassignment(p, c.Target, img.Eligible)
}

// Reassignment asks for one partition's replicas to become Replicas
// (Kafka's AlterPartitionReassignments); Replicas nil cancels the
// reassignment in flight.
type Reassignment struct {
	TP       base.TopicPartition
	Replicas []int32
	// KeepReplicationFactor refuses Replicas of another size than the
	// partition's replication factor (the target of a reassignment in
	// flight, if any): AllowReplicationFactorChange false (KIP-860).
	KeepReplicationFactor bool
}

// AlterPartitionReassignments starts, replaces or cancels the
// reassignment of each of rs, in order, one partition change each, and
// answers each: nil once the change is applied (a reassignment that can
// complete at once has completed; others complete as the adding replicas
// join the ISR); ErrUnknownTopic or ErrInvalidPartitions for no such
// partition; ErrInvalidReplicaAssignment for an empty list, a duplicate,
// an unregistered broker, or a change that would leave no ISR member;
// ErrInvalidReplicationFactor for a size change with
// KeepReplicationFactor; ErrNoReassignmentInProgress for cancelling none;
// or the proposal's error (ErrNotController, ErrClosed, ctx's). Any member
// may be asked: proposals are forwarded to the controller.
func (s *Store) AlterPartitionReassignments(ctx context.Context, rs []Reassignment) []error {
	out := make([]error, len(rs))
	for i, r := range rs {
		out[i] = s.reassign(ctx, r)
	}
	return out
}

func (s *Store) reassign(ctx context.Context, r Reassignment) error {
	t, p, err := lookupPartition(s.Image(), r.TP)
	if err != nil {
		return err
	}
	c := &reassignPartitionCmd{TopicID: t.ID, Partition: r.TP.Partition, Target: slices.Clone(r.Replicas),
		Cancel: r.Replicas == nil, KeepReplicationFactor: r.KeepReplicationFactor}
	// What this image refuses takes no log entry; apply checks again.
	if _, _, err := reassignmentOf(s.Image(), p, c); err != nil {
		return fmt.Errorf("%s: %w", r.TP, err)
	}
	_, err = s.propose(ctx, c)
	return err
}

// ReassignmentState is a partition's reassignment in flight (Kafka's
// OngoingPartitionReassignment).
type ReassignmentState struct {
	TP       base.TopicPartition
	Replicas []int32
	Adding   []int32
	Removing []int32
}

// ListPartitionReassignments lists the reassignments in flight of parts
// (nil: of every partition), by topic name then partition; partitions
// that do not exist or have none in flight are left out, as Kafka does.
// It reads this member's image.
func (s *Store) ListPartitionReassignments(parts []base.TopicPartition) []ReassignmentState {
	return s.Image().Reassignments(parts)
}

// Reassignments is ListPartitionReassignments over img.
func (img *Image) Reassignments(parts []base.TopicPartition) []ReassignmentState {
	var out []ReassignmentState
	add := func(name string, p Partition) {
		if p.Reassigning() {
			out = append(out, ReassignmentState{TP: base.TopicPartition{Topic: name, Partition: p.Index},
				Replicas: slices.Clone(p.Replicas), Adding: slices.Clone(p.AddingReplicas), Removing: slices.Clone(p.RemovingReplicas)})
		}
	}
	if parts == nil {
		for name, t := range img.Topics {
			for _, p := range t.Partitions {
				add(name, p)
			}
		}
	} else {
		seen := map[base.TopicPartition]bool{}
		for _, tp := range parts {
			if _, p, err := lookupPartition(img, tp); err == nil && !seen[tp] {
				seen[tp] = true
				add(tp.Topic, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b ReassignmentState) int {
		return cmp.Or(strings.Compare(a.TP.Topic, b.TP.Topic), cmp.Compare(a.TP.Partition, b.TP.Partition))
	})
	return out
}
