package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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

	// Partition 0 past its end (1), partition 1 at its end.
	req := consumerFetch(topic, topicIDOf(t, adm, topic), map[int32]int64{0: 5, 1: 0}, 1<<20)
	req.MaxWaitMillis, req.MinBytes = 20_000, 1<<20
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
