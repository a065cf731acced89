package api

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createWithAssignment sends CreateTopics v7 of topic with a manual
// replica assignment, partition by partition (numPartitions and the
// replication factor -1 unless given), and returns the answer.
func (rh *replicaHarness) createWithAssignment(topic string, partitions int32, assignment map[int32][]int32, order ...int32) (int16, string) {
	rh.t.Helper()
	r := kmsg.NewPtrCreateTopicsRequest()
	r.TimeoutMillis = 10_000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, -1
	for _, p := range order {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = p, assignment[p]
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	r.Topics = append(r.Topics, rt)
	st := rh.handle(19, 7, r, "User:ANONYMOUS").(*kmsg.CreateTopicsResponse).Topics[0]
	msg := ""
	if st.ErrorMessage != nil {
		msg = *st.ErrorMessage
	}
	return st.ErrorCode, msg
}

// TestCreateTopicsManualAssignment: a manual assignment names partitions 0
// to n-1 once each, in any order, each with as many distinct registered
// brokers (in a cluster) or this broker alone (on a single node);
// anything else is INVALID_REPLICA_ASSIGNMENT, and numPartitions beside it
// INVALID_REQUEST. Nothing refused is created.
func TestCreateTopicsManualAssignment(t *testing.T) {
	rh := newReplicaHarness(t, nil) // brokers 1, 2 and 3
	invalid := kerr.InvalidReplicaAssignment.Code
	for _, tc := range []struct {
		what       string
		partitions int32
		assignment map[int32][]int32
		order      []int32
		code       int16
		says       string
	}{
		{"partition 2 of 2", -1, map[int32][]int32{0: {1}, 2: {2}}, []int32{0, 2}, invalid, "lists partition 2 of 2; number the partitions 0 to 1"},
		{"a negative partition", -1, map[int32][]int32{-1: {1}}, []int32{-1}, invalid, "lists partition -1 of 1"},
		{"partition 0 twice", -1, map[int32][]int32{0: {1}}, []int32{0, 0}, invalid, "lists partition 0 twice"},
		{"fewer replicas in partition 1", -1, map[int32][]int32{0: {1, 2}, 1: {3}}, []int32{0, 1}, invalid, "partition 1 has 1 replicas and partition 0 has 2"},
		{"no replicas", -1, map[int32][]int32{0: {}}, []int32{0}, invalid, "partition 0 has 0 replicas"},
		{"a broker twice", -1, map[int32][]int32{0: {2, 2}}, []int32{0}, invalid, "partition 0 names broker 2 twice"},
		{"an unregistered broker", -1, map[int32][]int32{0: {1}, 1: {4}}, []int32{1, 0}, invalid, "partition 1 names broker 4, which is not registered"},
		{"numPartitions too", 2, map[int32][]int32{0: {1}, 1: {2}}, []int32{0, 1}, kerr.InvalidRequest.Code, "not both"},
	} {
		code, msg := rh.createWithAssignment("refused", tc.partitions, tc.assignment, tc.order...)
		if code != tc.code || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.what, code, msg, tc.code, tc.says)
		}
	}
	if _, ok := rh.meta.Image().Topics["refused"]; ok {
		t.Fatal("a refused assignment created the topic")
	}
	if code, msg := rh.createWithAssignment("placed", -1, map[int32][]int32{0: {3, 1}, 1: {2, 3}, 2: {1, 2}}, 2, 0, 1); code != 0 {
		t.Fatalf("a sound assignment out of order: %d %s", code, msg)
	}
	parts := rh.meta.Image().Topics["placed"].Partitions
	if len(parts) != 3 || !slices.Equal(parts[0].Replicas, []int32{3, 1}) || !slices.Equal(parts[1].Replicas, []int32{2, 3}) || !slices.Equal(parts[2].Replicas, []int32{1, 2}) {
		t.Fatalf("placed as %+v", parts)
	}

	single := newSingleNodeHarness(t)
	for _, tc := range []struct {
		what       string
		assignment map[int32][]int32
		order      []int32
		code       int16
	}{
		{"another broker", map[int32][]int32{0: {2}}, []int32{0}, invalid},
		{"this broker and another", map[int32][]int32{0: {1, 2}}, []int32{0}, invalid},
		{"no broker", map[int32][]int32{0: {}}, []int32{0}, invalid},
		{"this broker for each partition", map[int32][]int32{0: {1}, 1: {1}}, []int32{1, 0}, 0},
	} {
		if code, msg := single.createWithAssignment("one-"+strings.ReplaceAll(tc.what, " ", "-"), -1, tc.assignment, tc.order...); code != tc.code {
			t.Errorf("single node, %s: %d %q, want %d", tc.what, code, msg, tc.code)
		}
	}
}
