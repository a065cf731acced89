package metadata

import (
	"reflect"
	"slices"
	"testing"
)

// TestPartitionAfterUnfence: an unfenced broker gives a leader only to a
// partition that has none and whose ISR holds it (Kafka's
// handleBrokerUnfenced looks at leaderless partitions only); a partition
// with a leader keeps it even when the unfenced broker comes first in
// its replicas.
func TestPartitionAfterUnfence(t *testing.T) {
	live := func(ids ...int32) func(int32) bool {
		return func(id int32) bool { return slices.Contains(ids, id) }
	}
	for _, tc := range []struct {
		name     string
		p        Partition
		b        int32
		eligible func(int32) bool
		want     Partition
		changed  bool
	}{
		{"leaderless, ISR holds it",
			Partition{Leader: NoLeader, LeaderEpoch: 4, PartitionEpoch: 7, Replicas: []int32{1, 2}, ISR: []int32{1}},
			1, live(1, 2),
			Partition{Leader: 1, LeaderEpoch: 5, PartitionEpoch: 8, Replicas: []int32{1, 2}, ISR: []int32{1}}, true},
		{"leaderless, ISR does not hold it",
			Partition{Leader: NoLeader, LeaderEpoch: 4, PartitionEpoch: 7, Replicas: []int32{1, 2}, ISR: []int32{1}},
			2, live(2),
			Partition{Leader: NoLeader, LeaderEpoch: 4, PartitionEpoch: 7, Replicas: []int32{1, 2}, ISR: []int32{1}}, false},
		{"led by another, ISR holds it ahead of the leader",
			Partition{Leader: 2, LeaderEpoch: 4, PartitionEpoch: 7, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
			1, live(1, 2),
			Partition{Leader: 2, LeaderEpoch: 4, PartitionEpoch: 7, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := partitionAfterUnfence(tc.p, tc.b, tc.eligible)
			if changed != tc.changed || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("partitionAfterUnfence = %+v, %v; want %+v, %v", got, changed, tc.want, tc.changed)
			}
		})
	}
}
