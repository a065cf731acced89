package main

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/metrics"
)

func TestClusterValues(t *testing.T) {
	img := &metadata.Image{
		Topics: map[string]*metadata.Topic{
			"a": {Name: "a", Partitions: []metadata.Partition{
				{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1}, // full, at its min ISR 3
				{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1},    // under-replicated, at min ISR 2
				{Replicas: []int32{1, 2, 3}, ISR: []int32{1}, Leader: 1},       // under min ISR
				{Replicas: []int32{2, 1, 3}, ISR: []int32{2, 1}, Leader: 2},    // led elsewhere
				{Replicas: []int32{3, 1, 2}, ISR: []int32{3}, Leader: metadata.NoLeader},
				// Moving from [2] to [3]: 3 is being added, 2 in sync.
				{Replicas: []int32{3, 2}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{2}, ISR: []int32{2}, Leader: 2},
			}},
			"b": {Name: "b", Partitions: []metadata.Partition{
				{Replicas: []int32{1, 2}, ISR: []int32{1}, Leader: 1}, // under-replicated, at its min ISR 1
			}},
		},
		Brokers: map[int32]*metadata.Broker{1: {ID: 1}, 2: {ID: 2}, 3: {ID: 3, Fenced: true}},
	}
	// Each partition's own min.insync.replicas: a's first 3, b's 1, the
	// rest 2.
	minISR := func(tp base.TopicPartition) int {
		switch {
		case tp.Topic == "b":
			return 1
		case tp.Partition == 0:
			return 3
		}
		return 2
	}
	tests := []struct {
		name       string
		self       int32
		controller bool
		want       metrics.ClusterValues
	}{
		{"leader and controller", 1, true, metrics.ClusterValues{Leaders: 4, UnderReplicated: 3, AtMinISR: 3, UnderMinISR: 1,
			ActiveController: true, OfflinePartitions: 1, FencedBrokers: 1}},
		{"leader, not controller", 1, false, metrics.ClusterValues{Leaders: 4, UnderReplicated: 3, AtMinISR: 3, UnderMinISR: 1}},
		{"other broker", 2, false, metrics.ClusterValues{Leaders: 2, UnderReplicated: 1, AtMinISR: 1, UnderMinISR: 1}},
		{"fenced broker leads nothing", 3, false, metrics.ClusterValues{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clusterValues(img, tt.self, tt.controller, minISR); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
