package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestExactlyOnceAcrossKills runs franz-go's GroupTransactSession over an
// input topic while the broker is killed (kill -9) and restarted twice:
// each poll's output records and input offsets are committed in one
// transaction (TxnOffsetCommit, markers on __consumer_offsets). A session
// that fails is closed and a new one resumes from the committed offsets.
// Read committed, the output holds every input record exactly once.
func TestExactlyOnceAcrossKills(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "transaction.abort.timed.out.transaction.cleanup.interval.ms=200",
		"group.initial.rebalance.delay.ms=0")
	const in, out, partitions, n = "eos-chaos-in", "eos-chaos-out", 2, eosChaosRecords
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, in, partitions, nil)
	createTopic(t, adm, out, partitions, nil)
	plain := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	want := map[int32][]string{}
	var inputs []*kgo.Record
	for i := range n {
		r := &kgo.Record{Topic: in, Partition: int32(i % partitions), Value: fmt.Appendf(nil, "v%d", i)}
		inputs = append(inputs, r)
		want[r.Partition] = append(want[r.Partition], "t-"+string(r.Value))
	}
	produceSync(t, plain, inputs...)

	var transformed atomic.Int64 // records in committed transactions, as told
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(90 * time.Second)
		for transformed.Load() < n && time.Now().Before(deadline) {
			runEOSSession(t, b.Addr, in, out, &transformed)
		}
	}()
	// Each kill comes once the sessions have made progress since the last.
	for k := range 2 {
		progress := time.Now().Add(60 * time.Second)
		for transformed.Load() < int64((k+1)*n/4) && time.Now().Before(progress) {
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("kill -9 with %d of %d records transformed", transformed.Load(), n)
		b.Kill()
		b.Restart()
	}
	<-done
	if got := transformed.Load(); got < n {
		t.Fatalf("the sessions committed %d of %d records in 90 s", got, n)
	}
	writeSentinels(t, b.Addr, out, partitions)
	requirePartitionValues(t, "output read_committed", readToSentinels(t, b.Addr, out, partitions, kgo.ReadCommitted()), want)
}

// eosChaosRecords is the input of TestExactlyOnceAcrossKills.
const eosChaosRecords = 3000

// runEOSSession transforms in into out until an error or until every
// record is done, counting the records of committed transactions.
func runEOSSession(t *testing.T, addr, in, out string, transformed *atomic.Int64) {
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(addr),
		kgo.DialTimeout(time.Second),
		kgo.RetryTimeout(5*time.Second),
		kgo.RequestTimeoutOverhead(2*time.Second),
		kgo.TransactionalID("eos-chaos-app"),
		kgo.TransactionTimeout(5*time.Second),
		kgo.ConsumerGroup("eos-chaos-group"),
		kgo.ConsumeTopics(in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableClientMetrics(),
	)
	if err != nil {
		t.Errorf("session: %v", err)
		return
	}
	defer sess.Close()
	for transformed.Load() < eosChaosRecords {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		fetches := sess.PollRecords(ctx, 50)
		cancel()
		if fetches.Err() != nil {
			return
		}
		if err := sess.Begin(); err != nil {
			return
		}
		var outs []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			outs = append(outs, &kgo.Record{Topic: out, Partition: r.Partition, Value: append([]byte("t-"), r.Value...)})
		})
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		perr := sess.ProduceSync(ctx, outs...).FirstErr()
		committed, err := sess.End(ctx, kgo.TransactionEndTry(perr == nil))
		cancel()
		if err != nil {
			return
		}
		if committed {
			transformed.Add(int64(len(outs)))
		}
	}
}
