package broker

import (
	"errors"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
)

// TestCheckReplicaFetchRange: a fetch that names no last fetched epoch is
// read from its offset anywhere in [log start, log end], and is out of
// range elsewhere.
func TestCheckReplicaFetchRange(t *testing.T) {
	lineage := []base.EpochStart{{Epoch: 0, Start: 0}}
	off := partition.Offsets{LogStart: 5, LogEnd: 10, HighWatermark: 10}
	for _, tc := range []struct {
		offset base.Offset
		want   replication.FetchVerdict
	}{
		{4, replication.FetchOutOfRange},
		{5, replication.FetchFromOffset},
		{10, replication.FetchFromOffset},
		{11, replication.FetchOutOfRange},
	} {
		if got := checkReplicaFetch(lineage, off, ReplicaFetch{FetchOffset: tc.offset}); got.Verdict != tc.want {
			t.Errorf("fetch at %d: %v, want %v", tc.offset, got.Verdict, tc.want)
		}
	}
}

// TestAcksAllDoneForAReplacedPartition: an acks=all batch appended to a
// partition replaced since (a restart) is done with NOT_LEADER: the new
// one may not hold it.
func TestAcksAllDoneForAReplacedPartition(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("replaced", []int32{1, 2})
	before := f.hosted(base.TopicPartition{Topic: "replaced", Partition: 0})
	f.restart()
	if done, err := f.b.AcksAllDone(before, 0); !done || !errors.Is(err, partition.ErrNotLeader) {
		t.Fatalf("AcksAllDone for the closed partition: %v, %v; want done, ErrNotLeader", done, err)
	}
}

// TestAcksAllDoneCapsMinISR: with min.insync.replicas above the number
// of replicas, an acks=all batch is done without error once every replica
// has it (the effective minimum is the replica count).
func TestAcksAllDoneCapsMinISR(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(3))
	tp, p := f.createLed("capped", 1, 2)
	appendRecords(t, p, 1)
	f.mustFetch(tp, 2, 1, 0)
	if done, err := f.b.AcksAllDone(p, 1); !done || err != nil {
		t.Fatalf("AcksAllDone: %v, %v; want done", done, err)
	}
}
