package main

import (
	"bytes"
	"fmt"
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
	nodes, cl := startFetcherPair(t, map[string]string{"num.replica.fetchers": "3"}, assignments)
	for p := range int32(partitions) {
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

// num.replica.fetchers changes at run time (Kafka's DynamicThreadPool):
// going from one fetcher to three and back to one moves the partitions to
// their new fetchers, and every acks=all record produced before, between
// and after the changes is replicated exactly once, in order.
func TestReplicaFetchersResizeAtRunTime(t *testing.T) {
	const partitions = 6
	assignments := make([][]int32, partitions)
	for p := range assignments {
		assignments[p] = []int32{1, 2}
	}
	nodes, cl := startFetcherPair(t, nil, assignments)
	produced := 0
	produceRound := func() {
		t.Helper()
		for p := range int32(partitions) {
			r := &kgo.Record{Topic: "r", Partition: p, Value: []byte{byte(p), byte(produced)}}
			if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
				t.Fatalf("producing to r-%d: %v", p, err)
			}
		}
		produced++
	}
	requireReplicated := func(when string) {
		t.Helper()
		for p := range int32(partitions) {
			tp := base.TopicPartition{Topic: "r", Partition: p}
			fp, ok := nodes[2].broker.Partition(tp)
			if !ok {
				t.Fatalf("node 2 does not host %v", tp)
			}
			waitUntil(t, when+": the follower's high watermark", func() bool { return fp.Offsets().HighWatermark == base.Offset(produced) })
			if fe := fp.Offsets().LogEnd; fe != base.Offset(produced) {
				t.Fatalf("%s: %v's follower ends at %d, want %d", when, tp, fe, produced)
			}
		}
	}
	produceRound()
	requireReplicated("with one fetcher")
	for _, n := range []int{3, 1, 2} {
		nodes[2].fetchers.SetFetchers(n)
		if got := nodes[2].fetchers.Count(); got != n {
			t.Fatalf("Count() = %d after SetFetchers(%d)", got, n)
		}
		for range 3 {
			produceRound()
		}
		requireReplicated(fmt.Sprintf("after the change to %d fetchers", n))
	}
	// The follower's log is the leader's, byte for byte: each record once,
	// in order.
	for p := range int32(partitions) {
		tp := base.TopicPartition{Topic: "r", Partition: p}
		lp, _ := nodes[1].broker.Partition(tp)
		fp, _ := nodes[2].broker.Partition(tp)
		lr, err := lp.Read(0, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := fp.Read(0, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(lr.Records, fr.Records) {
			t.Fatalf("%v: the follower's log (%d bytes) is not the leader's (%d bytes)", tp, len(fr.Records), len(lr.Records))
		}
	}
}

// startFetcherPair starts nodes 1 and 2 with configs and topic r of the
// given assignments, waits until node 1 leads each partition, and returns
// them with an acks=all client that picks partitions by hand.
func startFetcherPair(t *testing.T, configs map[string]string, assignments [][]int32) (map[int32]*replicaNode, *kgo.Client) {
	t.Helper()
	nodes := startTwoNodesWith(t, openTestQuorum(t), configs, metadata.CreateTopic{Name: "r", Assignments: assignments})
	cl, err := kgo.NewClient(kgo.SeedBrokers(nodes[1].addr), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	for p := range int32(len(assignments)) {
		waitUntil(t, "r's leaders from the image", func() bool {
			lp, ok := nodes[1].broker.Partition(base.TopicPartition{Topic: "r", Partition: p})
			return ok && lp.IsLeader()
		})
	}
	return nodes, cl
}
