package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// In a cluster, CreatePartitions places new partitions where a manual
// assignment says: registered brokers, distinct, as many as the topic's
// replication factor.
func TestCreatePartitionsManualAssignmentInACluster(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("grow", nil, []int32{1, 2})
	grow := func(count int32, assignment ...[]int32) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrCreatePartitionsRequest()
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "grow", count
		for _, a := range assignment {
			ra := kmsg.NewCreatePartitionsRequestTopicAssignment()
			ra.Replicas = a
			rt.Assignment = append(rt.Assignment, ra)
		}
		req.Topics = append(req.Topics, rt)
		resp := rh.handle(37, 3, req, "User:ANONYMOUS").(*kmsg.CreatePartitionsResponse)
		r := resp.Topics[0]
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		return r.ErrorCode, msg
	}
	refused := []struct {
		name       string
		count      int32
		assignment [][]int32
	}{
		{"fewer assignments than new partitions", 3, [][]int32{{2, 3}}},
		{"another replication factor", 2, [][]int32{{3}}},
		{"a broker twice", 2, [][]int32{{3, 3}}},
		{"an unregistered broker", 2, [][]int32{{3, 9}}},
	}
	for _, tt := range refused {
		if code, msg := grow(tt.count, tt.assignment...); code != kerr.InvalidReplicaAssignment.Code {
			t.Errorf("%s: code %d (%s), want INVALID_REPLICA_ASSIGNMENT", tt.name, code, msg)
		}
	}
	if n := len(rh.meta.Image().Topics["grow"].Partitions); n != 1 {
		t.Fatalf("refused requests changed the topic: %d partitions", n)
	}
	if code, msg := grow(3, []int32{2, 3}, []int32{3, 1}); code != 0 {
		t.Fatalf("a valid assignment: code %d (%s)", code, msg)
	}
	parts := rh.meta.Image().Topics["grow"].Partitions
	if len(parts) != 3 || !slices.Equal(parts[1].Replicas, []int32{2, 3}) || !slices.Equal(parts[2].Replicas, []int32{3, 1}) {
		t.Fatalf("partitions after growing: %+v", parts)
	}
}
