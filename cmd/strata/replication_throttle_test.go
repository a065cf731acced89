package main

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
)

// KIP-73 end to end between two brokers over TCP: a replica added by a
// reassignment, its topic's follower.replication.throttled.replicas naming
// it and its broker's follower.replication.throttled.rate set (dynamic, as
// kafka-reassign-partitions --throttle sets them), catches up at about the
// rate: a follower fetches up to 1 MB a partition at a time, so 3 MB at
// 1 MB/s take a second or more (the third fetch waits for the first to
// leave the two-second window), where unthrottled they take milliseconds;
// it still catches up and joins the ISR.
func TestFollowerReplicationThrottle(t *testing.T) {
	meta := openTestQuorum(t)
	// Two one-second samples: a rate is measured over a second or two,
	// so the throttle bites after about one second's worth.
	nodes := startTwoNodesWith(t, meta, map[string]string{"replication.quota.window.num": "2"},
		metadata.CreateTopic{Name: "r", Assignments: [][]int32{{1}}})
	// Random hex: the client's compression leaves it about its size.
	values := make([]string, 300)
	for i := range values {
		values[i] = hex.EncodeToString(randomBytes(5_000))
	}
	produceTo(t, nodes[1].addr, kgo.LeaderAck(), values...)
	leaderEnd := hostedPartition(t, nodes[1]).Offsets().LogEnd

	if err := meta.SetNodeConfigs(t.Context(), 2, map[string]string{"follower.replication.throttled.rate": "1000000"}); err != nil {
		t.Fatal(err)
	}
	if err := meta.SetTopicConfigs(t.Context(), "r", map[string]string{"follower.replication.throttled.replicas": "*"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if errs := meta.AlterPartitionReassignments(t.Context(), []metadata.Reassignment{
		{TP: base.TopicPartition{Topic: "r", Partition: 0}, Replicas: []int32{1, 2}}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	waitUntil(t, "the throttled replica to catch up", func() bool {
		p, ok := nodes[2].broker.Partition(base.TopicPartition{Topic: "r", Partition: 0})
		return ok && p.Offsets().LogEnd >= leaderEnd
	})
	if took := time.Since(start); took < time.Second {
		t.Fatalf("3 MB replicated in %v through a 1 MB/s follower throttle; want a second or more", took)
	}
	waitUntil(t, "the caught-up replica to join the ISR", func() bool {
		isr := meta.Image().Topics["r"].Partitions[0].ISR
		return len(isr) == 2
	})
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
