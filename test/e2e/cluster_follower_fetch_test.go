package e2e

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

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

// TestClusterFetchFromFollower (KIP-392): on a three-rack cluster whose
// brokers run Kafka's rack-aware replica selector, a franz-go consumer in
// a follower's rack is sent there by the leader and reads every record
// from that follower, read_uncommitted and read_committed (the follower's
// last stable offset and aborted transactions, from its own log). When
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
