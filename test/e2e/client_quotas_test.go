package e2e

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// throttleSeen counts the throttles a client's brokers impose (franz-go's
// HookBrokerThrottle).
type throttleSeen struct{ n atomic.Int64 }

func (s *throttleSeen) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		s.n.Add(1)
	}
}

// quotaLimit is the byte rate the tests set, and quotaRun how long their
// clients send or read flat out. A meter spans 10 s at first (Kafka's 11
// one-second samples), so a client may move about ten seconds of its
// quota before it is throttled, plus the requests it has in flight when
// the first throttle comes (a producer's five of quotaBatchBytes, a
// consumer's one fetch); quotaCeiling bounds what it can move in the run
// with that allowance, generously: unthrottled, it moves far more.
const (
	quotaLimit      = 100 << 10
	quotaBatchBytes = 64 << 10
	quotaRun        = 3 * time.Second
	quotaCeiling    = 20 * quotaLimit
)

// TestClientQuotas: kadm sets and describes client quotas (Kafka's
// kafka-configs --entity-type clients/users), a producer over its
// producer_byte_rate and a consumer over its consumer_byte_rate are
// throttled (the client sees throttle_time_ms and is held back to about
// the quota), a client without a quota is not, and the quotas survive a
// restart of the broker.
func TestClientQuotas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir, "strata.metrics.listener=127.0.0.1:0")
	adm := newAdmin(t, b.Addr)
	ctx := testContext(t, 60*time.Second)
	createTopic(t, adm, "quota-in", 1, nil)
	createTopic(t, adm, "quota-out", 1, nil)
	// Quotas count the bytes on the wire: the records are incompressible
	// and sent uncompressed, so that the bytes counted here are those.
	fill := newClient(t, b.Addr, kgo.DefaultProduceTopic("quota-out"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for range 64 { // 4 MiB to read
		produceSync(t, fill, &kgo.Record{Value: randomBytes(64 << 10)})
	}

	slow, def := "slow-producer", "slow-consumer"
	results, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &slow}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: quotaLimit}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &def}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: quotaLimit}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user"}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 50}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Err != nil || results[1].Err != nil || results[2].Err == nil {
		t.Fatalf("alter results %+v: want the byte rates set and connection_creation_rate refused", results)
	}

	// The producer with a quota is held back; one without is not.
	throttled := &throttleSeen{}
	sent := produceFor(t, newClient(t, b.Addr, append(quotaProducerOpts(), kgo.ClientID(slow), kgo.WithHooks(throttled))...), quotaRun)
	if sent > quotaCeiling || throttled.n.Load() == 0 {
		t.Fatalf("producer with a %d B/s quota sent %d bytes in %s, %d throttles seen; want at most %d and some",
			quotaLimit, sent, quotaRun, throttled.n.Load(), quotaCeiling)
	}
	free := &throttleSeen{}
	if sent := produceFor(t, newClient(t, b.Addr, append(quotaProducerOpts(), kgo.WithHooks(free))...), quotaRun); sent <= quotaCeiling || free.n.Load() != 0 {
		t.Fatalf("producer without a quota sent %d bytes in %s, %d throttles; want more than %d and none", sent, quotaRun, free.n.Load(), quotaCeiling)
	}

	// The consumer with a quota reads slowly.
	throttled = &throttleSeen{}
	read := consumeFor(t, newClient(t, b.Addr, kgo.ClientID(def), kgo.ConsumeTopics("quota-out"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(quotaBatchBytes), kgo.FetchMaxPartitionBytes(quotaBatchBytes),
		kgo.WithHooks(throttled)), quotaRun)
	if read > quotaCeiling || throttled.n.Load() == 0 {
		t.Fatalf("consumer with a %d B/s quota read %d bytes in %s, %d throttles seen; want at most %d and some",
			quotaLimit, read, quotaRun, throttled.n.Load(), quotaCeiling)
	}

	// The broker counts what it throttled.
	m := scrape(t, metricsBase(t, b)+"/metrics")
	if m[`strata_quota_throttles_total{quota="producer_byte_rate"}`] == 0 || m[`strata_quota_throttles_total{quota="consumer_byte_rate"}`] == 0 ||
		m[`strata_quota_throttle_seconds_total{quota="producer_byte_rate"}`] <= 0 {
		t.Fatalf("throttle counters after throttled clients: %v", m)
	}

	// The quotas are in the metadata quorum: a restarted broker has them.
	b.Stop()
	b = startBroker(t, dir)
	described, err := newAdmin(t, b.Addr).DescribeClientQuotas(testContext(t, 30*time.Second), false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, d := range described {
		entity := ""
		for _, c := range d.Entity {
			entity += c.String()
		}
		for _, v := range d.Values {
			got[entity+" "+v.Key] = v.Value
		}
	}
	want := map[string]float64{"client-id=" + slow + " producer_byte_rate": quotaLimit, "client-id=" + def + " consumer_byte_rate": quotaLimit}
	if len(got) != len(want) || got["client-id="+slow+" producer_byte_rate"] != quotaLimit || got["client-id="+def+" consumer_byte_rate"] != quotaLimit {
		t.Fatalf("after a restart the quotas are %v, want %v", got, want)
	}
}

// quotaProducerOpts make the producers of TestClientQuotas: uncompressed
// (the quota counts wire bytes), small batches (a bounded burst in
// flight) and acks=1, so that the unlimited one's rate does not hang on a
// loaded machine's fsyncs.
func quotaProducerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.DefaultProduceTopic("quota-in"), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(quotaBatchBytes), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}
}

// produceFor produces 16 KiB records as fast as cl is let for d and
// returns the bytes acknowledged.
func produceFor(t *testing.T, cl *kgo.Client, d time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var acked atomic.Int64
	value := randomBytes(16 << 10)
	for ctx.Err() == nil {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			if err == nil {
				acked.Add(int64(len(r.Value)))
			}
		})
	}
	return acked.Load()
}

// consumeFor polls cl for d and returns the value bytes it read.
func consumeFor(t *testing.T, cl *kgo.Client, d time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var read int64
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { read += int64(len(r.Value)) })
	}
	return read
}

// randomBytes is n bytes no codec shrinks.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// throttlingBrokers records which brokers imposed throttles.
type throttlingBrokers struct {
	mu  sync.Mutex
	ids map[int32]bool
}

func (s *throttlingBrokers) OnBrokerThrottle(b kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids[b.NodeID] = true
}

// TestClusterClientQuotas: a quota set through one node of a cluster is
// enforced by every broker, each on what it leads (Kafka's quotas are per
// broker).
func TestClusterClientQuotas(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := newAdmin(t, c.Node(2).Addr)
	const topic = "cq-cluster"
	c.createTopic(adm, topic, 3, 1, map[string]*string{"min.insync.replicas": kadm.StringPtr("1")})
	leaders := c.waitPartitions(adm, topic, "led", func(p partitionState) bool { return p.Leader > 0 })
	want := map[int32]bool{}
	for _, p := range leaders {
		want[p.Leader] = true
	}
	slow := "cluster-slow"
	results, err := adm.AlterClientQuotas(testContext(t, 30*time.Second), []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &slow}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: quotaLimit}}},
	})
	if err != nil || results[0].Err != nil {
		t.Fatalf("setting the quota through node 2: %v %+v", err, results)
	}
	seen := &throttlingBrokers{ids: map[int32]bool{}}
	opts := append(quotaProducerOpts(), kgo.ClientID(slow), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.WithHooks(seen))
	sent := produceFor(t, newClient(t, c.Node(1).Addr, opts...), 2*quotaRun)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for id := range want {
		if !seen.ids[id] {
			t.Errorf("broker %d leads a partition of %s but throttled nothing (throttles from %v; %d bytes sent)", id, topic, seen.ids, sent)
		}
	}
}

// TestControllerMutationRate: kadm sets a controller_mutation_rate (KIP-599)
// on a client id; that client's admin requests create partitions up to the
// bucket (the rate over Kafka's 11 s window), then a topic is refused with
// THROTTLING_QUOTA_EXCEEDED and the client is told to wait; another client
// is not limited.
func TestControllerMutationRate(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	ctx := testContext(t, 60*time.Second)
	throttled := &throttleSeen{}
	limited := limitedAdmin(t, b.Addr, "mutator", "controller_mutation_rate", 1, throttled)
	// 11 permits: 10 partitions, then 6 (5 into debt: 5 s at 1/s, a wide
	// margin for a slow machine), then refused.
	for i, want := range []error{nil, nil, kerr.ThrottlingQuotaExceeded} {
		topic := fmt.Sprintf("mutated-%d", i)
		partitions := []int32{10, 6, 1}[i]
		resp, err := limited.CreateTopic(ctx, partitions, 1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if !errors.Is(err, want) {
			t.Fatalf("creating %s (%d partitions): %v, want %v", topic, partitions, err, want)
		}
	}
	if throttled.n.Load() == 0 {
		t.Error("the refused request carried no throttle")
	}
	free := newAdmin(t, b.Addr)
	if resp, err := free.CreateTopic(ctx, 20, 1, nil, "unlimited"); err != nil || resp.Err != nil {
		t.Fatalf("another client: %v %v", err, resp.Err)
	}
}

// TestRequestPercentage: a request_percentage (KIP-124) set with kadm holds
// a client that keeps the broker busy: franz-go sees throttles on its
// requests; ApiVersions and other clients are not throttled.
func TestRequestPercentage(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	ctx := testContext(t, 60*time.Second)
	throttled := &throttleSeen{}
	adm := limitedAdmin(t, b.Addr, "busy-client", "request_percentage", 0.0001, throttled)
	deadline := time.Now().Add(20 * time.Second)
	for throttled.n.Load() == 0 && time.Now().Before(deadline) {
		if _, err := adm.ListTopics(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if throttled.n.Load() == 0 {
		t.Fatal("a client over its request_percentage saw no throttle in 20 s of Metadata requests")
	}
	other := &throttleSeen{}
	free := kadm.NewClient(newClient(t, b.Addr, kgo.WithHooks(other)))
	for range 20 {
		if _, err := free.ListTopics(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if other.n.Load() != 0 {
		t.Fatalf("a client without a quota saw %d throttles", other.n.Load())
	}
}

// limitedAdmin sets quota key to value on client id clientID with kadm and
// returns an admin client with that id whose throttles seen counts.
func limitedAdmin(t *testing.T, addr, clientID, key string, value float64, seen *throttleSeen) *kadm.Client {
	t.Helper()
	results, err := newAdmin(t, addr).AlterClientQuotas(testContext(t, 30*time.Second), []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &clientID}},
			Ops: []kadm.AlterClientQuotaOp{{Key: key, Value: value}}},
	})
	if err != nil || results[0].Err != nil {
		t.Fatalf("setting %s on client id %s: %v %+v", key, clientID, err, results)
	}
	return kadm.NewClient(newClient(t, addr, kgo.ClientID(clientID), kgo.WithHooks(seen)))
}
