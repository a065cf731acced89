package metadata

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// Errors of ElectPreferredLeaders, one per partition; classify them with
// errors.Is.
var (
	// ErrElectionNotNeeded: the partition's preferred replica leads it
	// already. Kafka's ELECTION_NOT_NEEDED.
	ErrElectionNotNeeded = errors.New("metadata: election not needed")
	// ErrPreferredLeaderNotAvailable: the partition's preferred replica is
	// not in its ISR, or is fenced, so it cannot lead without losing
	// acknowledged records or while it is away. Kafka's
	// PREFERRED_LEADER_NOT_AVAILABLE.
	ErrPreferredLeaderNotAvailable = errors.New("metadata: preferred leader not available")
)

// ElectPreferredLeaders makes each of parts led by its preferred replica,
// the first of its replicas (Kafka's ElectLeaders with ElectionType
// PREFERRED). Any member may be asked: the elections are forwarded to the
// controller like any proposal. The answer holds one entry per distinct
// partition of parts: nil when, once the election is applied, the preferred
// replica leads; ErrUnknownTopic or ErrInvalidPartitions for no such topic
// or partition; ErrElectionNotNeeded when the preferred replica led
// already; ErrPreferredLeaderNotAvailable when it is outside the ISR or
// fenced; or, for the partitions it proposed, the proposal's error
// (ErrNotController, ErrClosed, ctx's).
func (s *Store) ElectPreferredLeaders(ctx context.Context, parts []base.TopicPartition) map[base.TopicPartition]error {
	return s.electLeaders(ctx, parts, election{
		check: func(tp base.TopicPartition, _ *Topic, p Partition, eligible func(int32) bool) error {
			return preferredElectionErr(tp, p, eligible)
		},
		command: func(refs []partitionRef) command { return &electPreferredCmd{Partitions: refs} },
		outcome: electionOutcome,
	})
}

// election is what ElectPreferredLeaders and ElectUncleanLeaders differ by:
// check says why a partition needs no election (nil: propose it), command
// carries the partitions to the controller, and outcome is a proposed
// partition's answer once its command applied.
type election struct {
	check   func(tp base.TopicPartition, t *Topic, p Partition, eligible func(int32) bool) error
	command func(refs []partitionRef) command
	outcome func(img *Image, r partitionRef, tp base.TopicPartition) error
}

// electLeaders checks each distinct partition of parts and proposes those
// that need an election, in commands of at most
// maxPreferredElectionsPerCommand partitions.
func (s *Store) electLeaders(ctx context.Context, parts []base.TopicPartition, e election) map[base.TopicPartition]error {
	img := s.Image()
	out := make(map[base.TopicPartition]error, len(parts))
	var (
		proposed []base.TopicPartition
		refs     []partitionRef
	)
	for _, tp := range parts {
		if _, seen := out[tp]; seen {
			continue
		}
		t, p, err := lookupPartition(img, tp)
		if err == nil {
			err = e.check(tp, t, p, img.Eligible)
		}
		out[tp] = err
		if err == nil {
			proposed = append(proposed, tp)
			refs = append(refs, partitionRef{TopicID: t.ID, Partition: tp.Partition})
		}
	}
	for start := 0; start < len(refs); start += maxPreferredElectionsPerCommand {
		end := min(start+maxPreferredElectionsPerCommand, len(refs))
		next, err := s.propose(ctx, e.command(slices.Clone(refs[start:end])))
		for i := start; i < end; i++ {
			if err != nil {
				out[proposed[i]] = err
				continue
			}
			out[proposed[i]] = e.outcome(next, refs[i], proposed[i])
		}
	}
	return out
}

// lookupPartition finds tp in img.
func lookupPartition(img *Image, tp base.TopicPartition) (*Topic, Partition, error) {
	t, ok := img.Topics[tp.Topic]
	if !ok {
		return nil, Partition{}, fmt.Errorf("%w: %q", ErrUnknownTopic, tp.Topic)
	}
	if tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return nil, Partition{}, fmt.Errorf("%w: %s has no partition %d", ErrInvalidPartitions, tp.Topic, tp.Partition)
	}
	return t, t.Partitions[tp.Partition], nil
}

// lookupPartitionByID finds partition index of the topic with id id in
// img.
func lookupPartitionByID(img *Image, id base.TopicID, index int32) (*Topic, Partition, error) {
	t, ok := img.TopicsByID[id]
	if !ok {
		return nil, Partition{}, fmt.Errorf("%w: topic id %x", ErrUnknownTopic, id)
	}
	if index < 0 || int(index) >= len(t.Partitions) {
		return nil, Partition{}, fmt.Errorf("%w: %s has no partition %d", ErrInvalidPartitions, t.Name, index)
	}
	return t, t.Partitions[index], nil
}

// preferredElectionErr says why p's preferred election would change
// nothing; nil when it would elect.
func preferredElectionErr(tp base.TopicPartition, p Partition, eligible func(int32) bool) error {
	preferred := p.Replicas[0]
	switch preferredStateOf(p, eligible) {
	case preferredLeads:
		return fmt.Errorf("%w: %s is led by its preferred replica %d", ErrElectionNotNeeded, tp, preferred)
	case preferredOutOfSync:
		return fmt.Errorf("%w: %s: preferred replica %d is not in the ISR %v", ErrPreferredLeaderNotAvailable, tp, preferred, p.ISR)
	case preferredIneligible:
		return fmt.Errorf("%w: %s: preferred replica %d is fenced", ErrPreferredLeaderNotAvailable, tp, preferred)
	case preferredElectable:
		return nil
	}
	panic(fmt.Sprintf("metadata: preferred state %d", preferredStateOf(p, eligible)))
}

// electionOutcome is the answer for tp (r) once its election is applied in
// img: success only when the preferred replica leads.
func electionOutcome(img *Image, r partitionRef, tp base.TopicPartition) error {
	t, ok := img.TopicsByID[r.TopicID]
	if !ok {
		return fmt.Errorf("%w: %q was deleted meanwhile", ErrUnknownTopic, tp.Topic)
	}
	p := t.Partitions[r.Partition] // partitions are never removed from a topic
	if p.Leader == p.Replicas[0] {
		return nil
	}
	if err := preferredElectionErr(tp, p, img.Eligible); err != nil {
		return err
	}
	// Apply elects whatever it can, but a follower answers from its own
	// image, which may hold later changes: a fence and an ISR change after
	// the election can make the preferred replica electable again.
	return fmt.Errorf("%w: %s: leadership moved again after the election; try again", ErrPreferredLeaderNotAvailable, tp)
}
