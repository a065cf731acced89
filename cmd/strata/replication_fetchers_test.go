package main

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/replication"
)

// With num.replica.fetchers=3 a follower splits one leader's partitions
// over three fetchers, each on its own connection, and every partition
// still replicates: acks=all produces are acknowledged (the follower has
// fetched them) and the follower ends where the leader does.
func TestReplicaFetchersSplitALeadersPartitions(t *testing.T) {
	const partitions = 6
	assignments := make([][]int32, partitions)
	used := map[int]bool{}
	for p := range assignments {
		assignments[p] = []int32{1, 2}
		used[replication.FetcherID(base.TopicPartition{Topic: "r", Partition: int32(p)}, 3)] = true
	}
	if len(used) != 3 {
		t.Fatalf("the partitions of r use fetchers %v; the test wants all three", used)
	}
	nodes := startTwoNodesWith(t, openTestQuorum(t), map[string]string{"num.replica.fetchers": "3"},
		metadata.CreateTopic{Name: "r", Assignments: assignments})

	cl, err := kgo.NewClient(kgo.SeedBrokers(nodes[1].addr), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for p := range int32(partitions) {
		waitUntil(t, "r's leaders from the image", func() bool {
			lp, ok := nodes[1].broker.Partition(base.TopicPartition{Topic: "r", Partition: p})
			return ok && lp.IsLeader()
		})
		for i := range 3 {
			r := &kgo.Record{Topic: "r", Partition: p, Value: []byte{byte(p), byte(i)}}
			if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
				t.Fatalf("producing to r-%d: %v", p, err)
			}
		}
	}
	for p := range int32(partitions) {
		tp := base.TopicPartition{Topic: "r", Partition: p}
		lp, _ := nodes[1].broker.Partition(tp)
		fp, ok := nodes[2].broker.Partition(tp)
		if !ok {
			t.Fatalf("node 2 does not host %v", tp)
		}
		waitUntil(t, "the follower's high watermark", func() bool { return fp.Offsets().HighWatermark == 3 })
		if le, fe := lp.Offsets().LogEnd, fp.Offsets().LogEnd; le != 3 || fe != 3 {
			t.Fatalf("%v: leader ends at %d, follower at %d; want 3", tp, le, fe)
		}
	}

	rc := nodes[2].coord.replicaClients
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for f := range 3 {
		if _, ok := rc.byKey[replicaClientKey{broker: 1, fetcher: f}]; !ok {
			t.Errorf("node 2 has no connection of fetcher %d to broker 1 (connections: %v)", f, rc.byKey)
		}
	}
}
