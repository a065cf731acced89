package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every client gets bounded timeouts so that a broker that stops answering
// fails a test instead of hanging it.
const (
	clientDialTimeout     = 5 * time.Second
	clientRetryTimeout    = 20 * time.Second
	clientDeliveryTimeout = 30 * time.Second
	consumeTimeout        = 30 * time.Second
)

// testContext returns a context that ends after d or when the test ends.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newClient returns a kgo client for addr with bounded timeouts; opts are
// applied after the defaults and so override them. It is closed when the
// test ends.
func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	base := []kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.DialTimeout(clientDialTimeout),
		kgo.RequestTimeoutOverhead(10 * time.Second),
		kgo.RetryTimeout(clientRetryTimeout),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.RecordDeliveryTimeout(clientDeliveryTimeout),
		kgo.ProduceRequestTimeout(10 * time.Second),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.DisableClientMetrics(),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatalf("kgo client for %s: %v", addr, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// newAdmin returns a kadm client for addr, closed when the test ends.
func newAdmin(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	adm.SetTimeoutMillis(10_000)
	return adm
}

// createTopic creates topic with the given partitions and replication
// factor 1, failing the test on any error, and waits until metadata shows it.
func createTopic(t *testing.T, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := adm.CreateTopic(testContext(t, 15*time.Second), partitions, 1, configs, topic)
	if err != nil {
		t.Fatalf("creating topic %q: %v (%s)", topic, err, resp.ErrMessage)
	}
	if resp.NumPartitions != partitions {
		t.Fatalf("creating topic %q: response has %d partitions, want %d", topic, resp.NumPartitions, partitions)
	}
	requirePartitionCount(t, adm, topic, int(partitions))
}

// metadataSettle bounds how long a created or deleted topic may take to show
// in Metadata; Kafka answers CreateTopics before every broker's metadata
// cache has caught up.
const metadataSettle = 10 * time.Second

// requirePartitionCount waits until Metadata shows topic with want
// partitions.
func requirePartitionCount(t *testing.T, adm *kadm.Client, topic string, want int) {
	t.Helper()
	deadline := time.Now().Add(metadataSettle)
	for {
		details, err := adm.ListTopics(testContext(t, 10*time.Second), topic)
		if err != nil {
			t.Fatal(err)
		}
		d := details[topic]
		if d.Err == nil && len(d.Partitions) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %q: err %v, %d partitions, want %d", topic, d.Err, len(d.Partitions), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// produceSync produces records and fails the test on the first error.
func produceSync(t *testing.T, cl *kgo.Client, records ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(testContext(t, clientDeliveryTimeout), records...).FirstErr(); err != nil {
		t.Fatalf("producing %d records: %v", len(records), err)
	}
}

// consumeAll reads every partition of topic from its start offset up to the
// end offset listed when it is called, with a fresh client, and returns the
// records by partition in offset order.
func consumeAll(t *testing.T, addr, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx := testContext(t, consumeTimeout)
	adm := newAdmin(t, addr)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil || starts.Error() != nil {
		t.Fatalf("listing start offsets of %q: %v / %v", topic, err, starts.Error())
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("listing end offsets of %q: %v / %v", topic, err, ends.Error())
	}
	remaining := make(map[int32]int64) // partition → end offset not yet reached
	from := make(map[int32]kgo.Offset)
	ends.Each(func(o kadm.ListedOffset) {
		start, _ := starts.Lookup(topic, o.Partition)
		from[o.Partition] = kgo.NewOffset().At(start.Offset)
		if o.Offset > start.Offset {
			remaining[o.Partition] = o.Offset
		}
	})
	out := make(map[int32][]*kgo.Record)
	if len(remaining) == 0 {
		return out
	}
	cl := newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	for len(remaining) > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %q: %v; partitions not read to their end: %v", topic, ctx.Err(), remaining)
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Fatalf("consuming %s/%d: %v", topic, p, err)
		})
		fetches.EachRecord(func(r *kgo.Record) {
			end, open := remaining[r.Partition]
			if !open {
				return
			}
			out[r.Partition] = append(out[r.Partition], r)
			if r.Offset+1 >= end {
				delete(remaining, r.Partition)
			}
		})
	}
	return out
}

// requireOffsetsContiguous checks that records hold offsets first, first+1, ….
func requireOffsetsContiguous(t *testing.T, records []*kgo.Record, first int64) {
	t.Helper()
	for i, r := range records {
		if want := first + int64(i); r.Offset != want {
			t.Fatalf("record %d of %s/%d has offset %d, want %d", i, r.Topic, r.Partition, r.Offset, want)
		}
	}
}

// value formats the unique value of record i of a named stream.
func value(stream string, i int) string { return fmt.Sprintf("%s-%08d", stream, i) }

// pastBase is a millisecond timestamp shortly in the past: records stamped
// from it plus a few seconds stay in the past, and kgo, which starts a
// record's delivery timeout at its timestamp, does not expire them at once.
func pastBase() time.Time {
	return time.Now().Add(-10 * time.Second).Truncate(time.Millisecond)
}

// listPartitionOffsets asks ListOffsets for the offset at timestamp (-1 latest, -2
// earliest, -4 the local log start, or a time) of each partition of topic,
// at an isolation level (0 read_uncommitted, 1 read_committed), and
// returns the partitions' answers.
func listPartitionOffsets(t *testing.T, cl *kgo.Client, topic string, partitions int32, timestamp int64, isolation int8) []kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, timestamp
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t, 10*time.Second), cl)
	if err != nil {
		t.Fatalf("ListOffsets of %s: %v", topic, err)
	}
	if len(resp.Topics) != 1 {
		t.Fatalf("ListOffsets of %s: %d topics answered", topic, len(resp.Topics))
	}
	return resp.Topics[0].Partitions
}
