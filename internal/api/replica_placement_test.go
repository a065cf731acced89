package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A manual assignment names partitions 0 to n-1 once each, in any order:
// sarama builds it from a map (its functional TestFuncAdminListOffsets
// failed here when only 0, 1, ... in order was taken).
func TestAssignmentByPartition(t *testing.T) {
	type entry struct {
		partition int32
		replicas  []int32
	}
	for _, tt := range []struct {
		name    string
		entries []entry
		want    [][]int32
		code    int16
	}{
		{"in order", []entry{{0, []int32{1, 2}}, {1, []int32{2, 3}}}, [][]int32{{1, 2}, {2, 3}}, 0},
		{"any order", []entry{{2, []int32{3}}, {0, []int32{1}}, {1, []int32{2}}}, [][]int32{{1}, {2}, {3}}, 0},
		{"no replicas stays listed", []entry{{1, []int32{2}}, {0, nil}}, [][]int32{{}, {2}}, 0},
		{"a gap", []entry{{0, []int32{1}}, {2, []int32{1}}}, nil, kerr.InvalidReplicaAssignment.Code},
		{"twice", []entry{{0, []int32{1}}, {0, []int32{2}}}, nil, kerr.InvalidReplicaAssignment.Code},
		{"negative", []entry{{-1, []int32{1}}}, nil, kerr.InvalidReplicaAssignment.Code},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var as []kmsg.CreateTopicsRequestTopicReplicaAssignment
			for _, e := range tt.entries {
				a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				a.Partition, a.Replicas = e.partition, e.replicas
				as = append(as, a)
			}
			got, code, msg := assignmentByPartition(as)
			if code != tt.code {
				t.Fatalf("code %d (%s), want %d", code, msg, tt.code)
			}
			if code != 0 && msg == "" {
				t.Fatal("an error with no message")
			}
			if !slices.EqualFunc(got, tt.want, func(a, b []int32) bool { return slices.Equal(a, b) }) {
				t.Fatalf("lists %v, want %v", got, tt.want)
			}
			if code == 0 && slices.ContainsFunc(got, func(l []int32) bool { return l == nil }) {
				t.Fatalf("a listed partition has a nil list: %v", got)
			}
		})
	}
}
