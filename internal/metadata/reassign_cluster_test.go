package metadata

import (
	"errors"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// TestClusterReassignThroughFollower: reassignments asked of a follower
// are forwarded to the controller, their errors keep their class over the
// wire, and every member lists the reassignment in flight until the
// leader's ISR expansion completes it.
func TestClusterReassignThroughFollower(t *testing.T) {
	c, epochs := brokersCluster(t, func(*Options) {})
	follower := c.follower(c.leader())
	tp := base.TopicPartition{Topic: "spread", Partition: 0}
	if errs := follower.AlterPartitionReassignments(t.Context(), []Reassignment{{TP: tp}}); !errors.Is(errs[0], ErrNoReassignmentInProgress) {
		t.Fatalf("cancelling none: %v", errs[0])
	}
	// Broker 3 leaves the ISR, so a move onto it waits for it.
	topic := follower.Image().Topics["spread"]
	p := topic.Partitions[0]
	isr := slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == 3 })
	if p.Leader == 3 {
		t.Skip("partition 0 is led by 3") // the striped assignment puts 1 first
	}
	if _, err := follower.AlterPartition(t.Context(), ISRChange{TopicID: topic.ID, Leader: p.Leader, BrokerEpoch: epochs[p.Leader],
		LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr}); err != nil {
		t.Fatal(err)
	}
	if errs := follower.AlterPartitionReassignments(t.Context(), []Reassignment{{TP: tp, Replicas: []int32{3}}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	for _, s := range c.open() {
		waitFor(t, "the reassignment listed everywhere", func() bool { return len(s.ListPartitionReassignments(nil)) == 1 })
	}
	rejoin(t, follower, epochs, tp, 3)
	for _, s := range c.open() {
		waitFor(t, "the move completed everywhere", func() bool {
			p := s.Image().Topics["spread"].Partitions[0]
			return !p.Reassigning() && slices.Equal(p.Replicas, []int32{3}) && p.Leader == 3
		})
	}
}
