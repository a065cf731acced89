package group

import (
	"testing"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

func TestConsumerGroupDescribe(t *testing.T) {
	h := newCGHarness(t, 3)
	h.send(join("b", ptr("i-b")))
	h.send(join("a", nil))
	view := viewOf(map[string]int32{"t1": 3})
	g := h.cg.describe("g", view, testAssignors)
	if g.Group != "g" || g.State != "Reconciling" || g.Epoch != 2 || g.AssignmentEpoch != 2 || g.AssignorName != "uniform" || len(g.Members) != 2 {
		t.Fatalf("described %+v", g)
	}
	a, b := g.Members[0], g.Members[1]
	if a.MemberID != "a" || b.MemberID != "b" || *b.InstanceID != "i-b" || a.ClientID != "client" || a.ClientHost != "/127.0.0.1" ||
		a.MemberType != memberTypeConsumer || len(a.SubscribedTopics) != 1 || a.SubscribedTopics[0] != "t1" {
		t.Fatalf("members %+v", g.Members)
	}
	// b holds all three until it revokes; a's target is one of them.
	if got := b.Assignment.TopicPartitions; len(got) != 1 || got[0].Topic != "t1" || len(got[0].Partitions) != 3 {
		t.Fatalf("b's assignment %+v", got)
	}
	if got := a.TargetAssignment.TopicPartitions; len(got) != 1 || got[0].Topic != "t1" || len(got[0].Partitions) == 0 {
		t.Fatalf("a's target %+v", got)
	}
	if got := a.Assignment.TopicPartitions; got == nil || len(got) != 0 {
		t.Fatalf("a's assignment %+v, want an empty list", got)
	}
	// A topic deleted since has no name.
	if got := describedAssignment(assignor.Assignment{cgT2: {0}}, viewOf(nil)); got.TopicPartitions[0].Topic != "" {
		t.Fatalf("a deleted topic named %q", got.TopicPartitions[0].Topic)
	}
}
