package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchErrorAnsweredAtOnce: a long poll with a partition in error is
// answered at once, as Kafka does, not after max.wait.ms: the consumer
// must reset its offset (here: past the end) before it can read again.
func TestFetchErrorAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "fetch-errors"
	createTopic(t, adm, topic, 2, nil)
	cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, cl, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("v")})

	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 20_000, 1<<20, 50<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicIDOf(t, adm, topic)
	for p, offset := range []int64{5, 0} { // partition 0 past its end (1), partition 1 at its end
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = int32(p), offset, 1<<20
		rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	start := time.Now()
	resp, err := req.RequestWith(testContext(t, 30*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	// The bound only tells "at once" from "after max.wait.ms" (20 s).
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("a fetch with a partition out of range was answered after %v", took)
	}
	got := resp.Topics[0].Partitions
	if len(got) != 2 || got[0].ErrorCode != kerr.OffsetOutOfRange.Code || got[0].HighWatermark != 1 || got[1].ErrorCode != 0 {
		t.Fatalf("answer: %+v", got)
	}
}
