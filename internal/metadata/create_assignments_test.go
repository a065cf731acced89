package metadata

import (
	"errors"
	"slices"
	"testing"
)

// TestCreateTopicWithExplicitAssignments: CreateTopic takes the replica
// lists it is given (Kafka's manual assignment), each led by its first
// eligible replica, and refuses one naming an unregistered broker.
func TestCreateTopicWithExplicitAssignments(t *testing.T) {
	s := openStore(t, testOptions(t, t.TempDir(), ""))
	defer closeStore(t, s)
	for _, id := range []int32{3, 4} {
		b, err := s.RegisterBroker(t.Context(), BrokerRegistration{ID: id, Incarnation: [16]byte{byte(id)}, Endpoints: endpoint(9000 + id)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UnfenceBroker(t.Context(), id, b.Epoch); err != nil {
			t.Fatal(err)
		}
	}
	topic, err := s.CreateTopic(t.Context(), CreateTopic{Name: "manual", Assignments: [][]int32{{4, 3}, {3}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(topic.Partitions) != 2 {
		t.Fatalf("%d partitions, want 2", len(topic.Partitions))
	}
	p0, p1 := topic.Partitions[0], topic.Partitions[1]
	if !slices.Equal(p0.Replicas, []int32{4, 3}) || p0.Leader != 4 || !slices.Equal(p0.ISR, []int32{4, 3}) {
		t.Errorf("partition 0 = %+v, want replicas and ISR [4 3] led by 4", p0)
	}
	if !slices.Equal(p1.Replicas, []int32{3}) || p1.Leader != 3 {
		t.Errorf("partition 1 = %+v, want replicas [3] led by 3", p1)
	}
	_, err = s.CreateTopic(t.Context(), CreateTopic{Name: "stranger", Assignments: [][]int32{{3, 7}}})
	if !errors.Is(err, ErrInvalidReplicaAssignment) {
		t.Fatalf("assignment naming unregistered broker 7: %v, want ErrInvalidReplicaAssignment", err)
	}
}
