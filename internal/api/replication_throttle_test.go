package api

import (
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

// setISR makes isr the ISR of partition 0 of topic, led by broker 1.
func (rh *replicaHarness) setISR(topic string, isr ...int32) {
	rh.t.Helper()
	t := rh.meta.Image().Topics[topic]
	pa := t.Partitions[0]
	if _, err := rh.meta.AlterPartition(rh.t.Context(), metadata.ISRChange{TopicID: t.ID, Partition: 0, Leader: 1,
		BrokerEpoch: rh.epochs[1], LeaderEpoch: pa.LeaderEpoch, PartitionEpoch: pa.PartitionEpoch, ISR: isr}); err != nil {
		rh.t.Fatal(err)
	}
	rh.reconcile()
}

// KIP-73, the leader's side: once this broker has sent its throttled
// followers more than leader.replication.throttled.rate, a throttled
// replica out of the ISR is answered without records (its offsets still
// move); an unthrottled partition, and the same replica back in the ISR,
// are served.
func TestLeaderReplicationThrottle(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{"leader.replication.throttled.rate": "1000"})
	// The leader list names the partition with the leader's id (1), as
	// kafka-reassign-partitions lists the existing replicas.
	rh.createTopic("thr", map[string]string{"leader.replication.throttled.replicas": "0:1"}, []int32{1, 2})
	rh.createTopic("other-leader", map[string]string{"leader.replication.throttled.replicas": "0:3"}, []int32{1, 2})
	rh.createTopic("free", nil, []int32{1, 2})
	for _, topic := range []string{"thr", "free", "other-leader"} {
		rh.setISR(topic, 1)
		p := rh.partition(topic, 0)
		for range 10 {
			if _, _, err := p.Append(oneRecordBatch(strings.Repeat("x", 2000)), partition.AcksLeader); err != nil {
				t.Fatal(err)
			}
		}
	}
	// 20 kB sent at once: under the rate until counted, then 2 kB/s over
	// the 10 s window, twice the rate.
	if sp := rh.replicaFetch(2, "thr", 0, 0, -1, 0); sp.ErrorCode != 0 || len(sp.RecordBatches) < 20000 {
		t.Fatalf("first throttled fetch: error %d, %d bytes; want all 20 kB", sp.ErrorCode, len(sp.RecordBatches))
	}
	sp := rh.replicaFetch(2, "thr", 0, 0, -1, 0)
	if sp.ErrorCode != 0 || len(sp.RecordBatches) != 0 || sp.HighWatermark < 0 {
		t.Fatalf("throttled fetch over the rate: error %d, %d bytes, high watermark %d; want no records, no error", sp.ErrorCode, len(sp.RecordBatches), sp.HighWatermark)
	}
	for _, topic := range []string{"free", "other-leader"} {
		if sp := rh.replicaFetch(2, topic, 0, 0, -1, 0); len(sp.RecordBatches) < 20000 {
			t.Fatalf("%s, not throttled on this leader, got %d bytes while the throttle is over its rate", topic, len(sp.RecordBatches))
		}
	}
	rh.setISR("thr", 1, 2)
	if sp := rh.replicaFetch(2, "thr", 0, 0, -1, 0); len(sp.RecordBatches) < 20000 {
		t.Fatalf("a throttled replica back in the ISR got %d bytes", len(sp.RecordBatches))
	}
}
