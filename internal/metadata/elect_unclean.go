package metadata

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-broker/strata/internal/base"
)

// ErrEligibleLeadersNotAvailable: an UNCLEAN election found no replica that
// could lead (every one fenced, or only replicas being added), or the topic
// is tiered. Kafka's ELIGIBLE_LEADERS_NOT_AVAILABLE.
var ErrEligibleLeadersNotAvailable = errors.New("metadata: eligible leaders not available")

// electUncleanCmd is an operator's UNCLEAN election of each of Partitions
// (Kafka's ElectLeaders with ElectionType UNCLEAN). Apply decides again
// against the image it applies to (uncleanElection): a partition that has
// a leader by then, or no eligible replica, or is of a tiered topic, is
// left as it is.
type electUncleanCmd struct {
	Partitions []partitionRef `json:"partitions"`
}

func (*electUncleanCmd) isCommand() {}

func applyElectUnclean(img *Image, c *electUncleanCmd, index uint64) (*Image, error) {
	return applyElections(img, "unclean", c.Partitions, index, func(t *Topic, p Partition, eligible func(int32) bool) (Partition, bool) {
		if tiered(t) {
			return p, false
		}
		return uncleanElection(p, eligible, img.brokerLostLogs)
	})
}

// tiered reports whether t keeps segments in the remote tier, which an
// UNCLEAN election would leave ahead of (or diverging from) the new
// leader's log; Strata refuses it there.
func tiered(t *Topic) bool { return strings.EqualFold(t.Configs["remote.storage.enable"], "true") }

// ElectUncleanLeaders elects a leader for each of parts that has none,
// from outside the ISR when no ISR member can lead (uncleanElection;
// Kafka's ElectLeaders with ElectionType UNCLEAN, what an operator does
// when a partition's last in-sync replica is gone for good). The answer
// holds one entry per distinct partition of parts: nil when, once the
// election is applied, the partition has a leader; ErrUnknownTopic or
// ErrInvalidPartitions; ErrElectionNotNeeded when it had a leader;
// ErrEligibleLeadersNotAvailable when no replica can lead or the topic is
// tiered; or the proposal's error.
func (s *Store) ElectUncleanLeaders(ctx context.Context, parts []base.TopicPartition) map[base.TopicPartition]error {
	return s.electLeaders(ctx, parts, election{
		check:   uncleanElectionErr,
		command: func(refs []partitionRef) command { return &electUncleanCmd{Partitions: refs} },
		outcome: func(img *Image, r partitionRef, tp base.TopicPartition) error {
			t, ok := img.TopicsByID[r.TopicID]
			if !ok {
				return fmt.Errorf("%w: %q was deleted meanwhile", ErrUnknownTopic, tp.Topic)
			}
			p := t.Partitions[r.Partition] // partitions are never removed from a topic
			if p.Leader != NoLeader {
				return nil
			}
			return uncleanElectionErr(tp, t, p, img.Eligible)
		},
	})
}

// uncleanElectionErr says why an UNCLEAN election of p would change
// nothing; nil when it would elect.
func uncleanElectionErr(tp base.TopicPartition, t *Topic, p Partition, eligible func(int32) bool) error {
	switch {
	case p.Leader != NoLeader:
		return fmt.Errorf("%w: %s has leader %d", ErrElectionNotNeeded, tp, p.Leader)
	case tiered(t):
		return fmt.Errorf("%w: %s is tiered (remote.storage.enable=true): a leader elected outside the ISR would not hold what the remote tier holds, so Strata refuses; it gets a leader when an in-sync replica returns", ErrEligibleLeadersNotAvailable, tp)
	}
	if _, ok := uncleanElection(p, eligible, func(int32) bool { return false }); !ok {
		return fmt.Errorf("%w: %s: no replica of %v can lead (fenced, or being added)", ErrEligibleLeadersNotAvailable, tp, p.Replicas)
	}
	return nil
}

// uncleanElection is p after an UNCLEAN election: a partition without a
// leader gets the first eligible replica of its ISR, as any election
// would, or else the first eligible replica in assignment order outside
// it, which becomes the only member of the ISR, passing over replicas on
// brokers that lost says started over empty while another eligible
// replica is left. That replica may lack records the ISR acknowledged:
// they are lost, and the other replicas truncate to its log when they
// return. Replicas being added by a reassignment are passed over (they hold
// the least). ok is false when p has a leader or no replica could lead.
func uncleanElection(p Partition, eligible, lost func(int32) bool) (Partition, bool) {
	if p.Leader != NoLeader {
		return p, false
	}
	if leader := electLeader(p.Replicas, p.ISR, eligible); leader != NoLeader {
		return withLeaderAndISR(p, leader, p.ISR)
	}
	candidate := func(r int32) bool { return eligible(r) && !slices.Contains(p.AddingReplicas, r) }
	for _, passOverEmpty := range []bool{true, false} {
		for _, r := range p.Replicas {
			if candidate(r) && !(passOverEmpty && lost(r)) {
				return withLeaderAndISR(p, r, []int32{r})
			}
		}
	}
	return p, false
}

// brokerLostLogs reports whether broker id's registration says it came
// back without its logs (Broker.LostLogs).
func (img *Image) brokerLostLogs(id int32) bool {
	b, ok := img.Brokers[id]
	return ok && b.LostLogs
}
