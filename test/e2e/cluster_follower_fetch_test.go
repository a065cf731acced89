package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-broker/strata/internal/config"
)

// readsFrom counts, per node, the records of the batches a client read
// (franz-go's HookFetchBatchRead).
type readsFrom struct {
	mu      sync.Mutex
	batches map[int32]int
}

func (r *readsFrom) OnFetchBatchRead(meta kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches[meta.NodeID] += m.NumRecords
}

func (r *readsFrom) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.batches)
}

func (r *readsFrom) snapshot() map[int32]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int32]int, len(r.batches))
	for k, v := range r.batches {
		out[k] = v
	}
	return out
}

// consumeValues polls cl until it has n records, and returns their values
// in order.
func consumeValues(t *testing.T, cl *kgo.Client, n int, within time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records within %v", len(got), n, within)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch error on %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// saramaReadsFromFollower: a sarama consumer with a RackID is sent to the
// follower of its rack too, and reads the records' bytes from it (sarama's
// per-broker incoming-byte-rate meters).
func saramaReadsFromFollower(t *testing.T, c *Cluster, adm *kadm.Client) {
	t.Helper()
	c.createTopic(adm, "near-sarama", 1, 3, nil)
	c.waitISR(adm, "near-sarama", 3)
	leader := c.leaderOf(adm, "near-sarama", 0)
	follower := leader%3 + 1
	const n, size = 100, 4096
	// Random values: the producer's compression leaves them their size.
	rng := rand.New(rand.NewPCG(1, 2))
	records := make([]*kgo.Record, n)
	for i := range records {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		records[i] = &kgo.Record{Topic: "near-sarama", Value: v}
	}
	produceSync(t, c.newClient(), records...)

	cfg := saramaConfig()
	cfg.RackID = "rack-" + strconv.Itoa(int(follower))
	cfg.Consumer.Fetch.Default = 1 << 20
	consumer, err := sarama.NewConsumer(c.Addrs(), cfg)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition("near-sarama", 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("sarama partition consumer: %v", err)
	}
	defer pc.Close()
	deadline := time.After(30 * time.Second)
	for i := range n {
		select {
		case m := <-pc.Messages():
			if m.Offset != int64(i) || !bytes.Equal(m.Value, records[i].Value) {
				t.Fatalf("sarama got offset %d (%d bytes), want offset %d", m.Offset, len(m.Value), i)
			}
		case err := <-pc.Errors():
			t.Fatalf("sarama: %v", err)
		case <-deadline:
			t.Fatalf("sarama consumed %d of %d records within 30s", i, n)
		}
	}
	bytesFrom := func(id int32) int64 {
		m, ok := cfg.MetricRegistry.Get("incoming-byte-rate-for-broker-" + strconv.Itoa(int(id))).(interface{ Count() int64 })
		if !ok {
			return 0
		}
		return m.Count()
	}
	if f, l := bytesFrom(follower), bytesFrom(leader); f < n*size || l >= n*size {
		t.Fatalf("sarama read %d bytes from the follower %d and %d from the leader %d; want the %d bytes of records from the follower",
			f, follower, l, leader, n*size)
	}
}

// TestClusterFetchFromFollower (KIP-392): on a three-rack cluster whose
// brokers run Kafka's rack-aware replica selector, a franz-go consumer in
// a follower's rack is sent there by the leader and reads every record
// from that follower, read_uncommitted and read_committed (the follower's
// last stable offset and aborted transactions, from its own log), and so
// does a sarama consumer with a RackID. When
// that follower is killed, the consumer goes back to the leader and
// misses nothing produced since.
func TestClusterFetchFromFollower(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, "broker.rack=rack-{node}", "replica.selector.class="+config.RackAwareReplicaSelector)
	adm := c.newAdmin()
	c.createTopic(adm, "near", 1, 3, nil)
	c.waitISR(adm, "near", 3)
	leader := c.leaderOf(adm, "near", 0)
	follower := leader%3 + 1
	rack := "rack-" + strconv.Itoa(int(follower))

	prod := c.newClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, prod, "near", 200)

	// A transaction that aborts and one that commits: read_committed
	// through the follower gets only the committed one.
	txn := c.newClient(kgo.TransactionalID("near-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, commit := range []bool{false, true} {
		ctx := testContext(t, 30*time.Second)
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			r := &kgo.Record{Topic: "near", Value: []byte(fmt.Sprintf("txn-%v-%d", commit, i))}
			if err := txn.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}

	for _, iso := range []kgo.IsolationLevel{kgo.ReadUncommitted(), kgo.ReadCommitted()} {
		reads := &readsFrom{batches: map[int32]int{}}
		want := 200 + 20 + 20
		if iso == kgo.ReadCommitted() {
			want = 200 + 20
		}
		cl := c.newClient(kgo.Rack(rack), kgo.ConsumeTopics("near"), kgo.FetchIsolationLevel(iso),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(reads))
		got := consumeValues(t, cl, want, 30*time.Second)
		cl.Close()
		for i := range 200 {
			if got[i] != value("near", i) {
				t.Fatalf("record %d is %q, want %q", i, got[i], value("near", i))
			}
		}
		for _, v := range got[200:] {
			if v[:9] == "txn-false" && iso == kgo.ReadCommitted() {
				t.Fatalf("read_committed through the follower got the aborted record %q", v)
			}
		}
		if n := len(got); n != want {
			t.Fatalf("got %d records, want %d", n, want)
		}
		if by := reads.snapshot(); by[follower] < want || len(by) != 1 {
			t.Fatalf("records read by node: %v; want all from node %d, the follower in %s", by, follower, rack)
		}
	}

	saramaReadsFromFollower(t, c, adm)

	// The follower dies under a consumer reading from it: the consumer
	// goes back to the leader and gets what is produced after.
	reads := &readsFrom{batches: map[int32]int{}}
	// franz-go keeps a partition on its preferred replica while the
	// leader stays the same, even once that replica left the metadata,
	// until RecheckPreferredReplicaInterval (30 minutes by default) sends
	// it back to the leader; the Java client falls back to the leader at
	// once. The leader sends it there again only while the follower is
	// live and in the ISR.
	cl := c.newClient(kgo.Rack(rack), kgo.ConsumeTopics("near"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(reads),
		kgo.RecheckPreferredReplicaInterval(time.Second))
	consumeValues(t, cl, 240, 30*time.Second)
	c.Node(follower).Kill()
	c.waitBrokers(leader, 6-leader-follower)
	after := make([]*kgo.Record, 50)
	for i := range after {
		after[i] = &kgo.Record{Topic: "near", Value: []byte("after-" + strconv.Itoa(i))}
	}
	produceSync(t, prod, after...)
	got := consumeValues(t, cl, 50, 60*time.Second)
	for i, v := range got {
		if v != "after-"+strconv.Itoa(i) {
			t.Fatalf("after the follower died, record %d is %q, want after-%d", i, v, i)
		}
	}
	if by := reads.snapshot(); by[follower] < 240 {
		t.Fatalf("records read by node: %v; want the first 240 from the follower %d", by, follower)
	}
}

// TestClusterFollowerLearnsHighWatermarkAtOnce: followers send their high
// watermark (Fetch v18, KIP-1166) and the leader answers a parked fetch
// as soon as its own is past it, so a consumer reading from a follower
// gets a lone record at once, not when the follower's next fetch ends its
// long poll (replica.fetch.wait.max.ms, 20 s here).
func TestClusterFollowerLearnsHighWatermarkAtOnce(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, "broker.rack=rack-{node}", "replica.selector.class="+config.RackAwareReplicaSelector,
		"replica.fetch.wait.max.ms=20000", "replica.lag.time.max.ms=30000")
	adm := c.newAdmin()
	c.createTopic(adm, "lone", 1, 3, nil)
	c.waitISR(adm, "lone", 3)
	follower := c.leaderOf(adm, "lone", 0)%3 + 1
	reads := &readsFrom{batches: map[int32]int{}}
	cl := c.newClient(kgo.Rack("rack-"+strconv.Itoa(int(follower))), kgo.ConsumeTopics("lone"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(reads))
	prod := c.newClient()
	// The first fetch may park on the leader before the follower has
	// fetched (the leader then serves it); from the second record on the
	// consumer reads from the follower.
	for i := range 4 {
		if i == 1 {
			reads.reset()
		}
		produceSync(t, prod, &kgo.Record{Topic: "lone", Value: []byte("lone-" + strconv.Itoa(i))})
		if got := consumeValues(t, cl, 1, 10*time.Second); got[0] != "lone-"+strconv.Itoa(i) {
			t.Fatalf("record %d is %q", i, got[0])
		}
	}
	if by := reads.snapshot(); len(by) != 1 || by[follower] != 3 {
		t.Fatalf("records read by node: %v; want the last three from the follower %d", by, follower)
	}
}
