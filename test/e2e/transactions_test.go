package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnClient returns a transactional franz-go producer.
func txnClient(t *testing.T, addr, id string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, addr, append([]kgo.Opt{
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(30 * time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, opts...)...)
}

// inTxn produces records in one transaction and ends it with commit.
func inTxn(t *testing.T, cl *kgo.Client, commit bool, records ...*kgo.Record) {
	t.Helper()
	ctx := testContext(t, clientDeliveryTimeout)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("producing in a transaction: %v", err)
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		t.Fatalf("ending the transaction (commit %v): %v", commit, err)
	}
}

// txnRecords are n records for each partition, valued prefix-p-i.
func txnRecords(topic, prefix string, partitions int32, n int) []*kgo.Record {
	var out []*kgo.Record
	for p := range partitions {
		for i := range n {
			out = append(out, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", prefix, p, i)})
		}
	}
	return out
}

const sentinel = "end-of-test"

// writeSentinels appends a plain record to every partition: a reader
// that reaches it has read everything before it. It has a key, which a
// compacted topic needs.
func writeSentinels(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	cl := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range partitions {
		produceSync(t, cl, &kgo.Record{Topic: topic, Partition: p, Key: []byte(sentinel), Value: []byte(sentinel)})
	}
}

// readToSentinels reads every partition from the start with the given
// isolation level until each partition's sentinel, and returns the values
// before it by partition.
func readToSentinels(t *testing.T, addr, topic string, partitions int32, level kgo.IsolationLevel) map[int32][]string {
	t.Helper()
	ctx := testContext(t, consumeTimeout)
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(level))
	out := map[int32][]string{}
	open := map[int32]bool{}
	for p := range partitions {
		open[p] = true
	}
	for len(open) > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %q: %v; partitions without their sentinel: %v; read %v", topic, ctx.Err(), open, out)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("reading %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			if !open[r.Partition] {
				return
			}
			if string(r.Value) == sentinel {
				delete(open, r.Partition)
				return
			}
			out[r.Partition] = append(out[r.Partition], string(r.Value))
		})
	}
	return out
}

// valuesByPartition groups records' values by partition, in order.
func valuesByPartition(records ...[]*kgo.Record) map[int32][]string {
	out := map[int32][]string{}
	for _, rs := range records {
		for _, r := range rs {
			out[r.Partition] = append(out[r.Partition], string(r.Value))
		}
	}
	return out
}

func requirePartitionValues(t *testing.T, who string, got, want map[int32][]string) {
	t.Helper()
	for p, w := range want {
		if !slices.Equal(got[p], w) {
			t.Fatalf("%s: partition %d holds %d values %q, want %d %q", who, p, len(got[p]), got[p], len(w), w)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok && len(g) > 0 {
			t.Fatalf("%s: partition %d holds %q, want nothing", who, p, g)
		}
	}
}

// TestTransactionsCommitAndAbort: committed transactions are read by
// read_committed consumers, aborted ones are not; read_uncommitted
// consumers see both, and neither sees the markers.
func TestTransactionsCommitAndAbort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := startBroker(t, dir)
	const topic, partitions = "txn-basic", 3
	createTopic(t, newAdmin(t, b.Addr), topic, partitions, nil)

	cl := txnClient(t, b.Addr, "txn-basic-producer")
	committed1 := txnRecords(topic, "c1", partitions, 20)
	aborted := txnRecords(topic, "ab", partitions, 20)
	committed2 := txnRecords(topic, "c2", partitions, 20)
	inTxn(t, cl, true, committed1...)
	inTxn(t, cl, false, aborted...)
	inTxn(t, cl, true, committed2...)
	writeSentinels(t, b.Addr, topic, partitions)

	requirePartitionValues(t, "read_committed", readToSentinels(t, b.Addr, topic, partitions, kgo.ReadCommitted()), valuesByPartition(committed1, committed2))
	requirePartitionValues(t, "read_uncommitted", readToSentinels(t, b.Addr, topic, partitions, kgo.ReadUncommitted()), valuesByPartition(committed1, aborted, committed2))
	// strata inspect names the markers, as Kafka's DumpLogSegments does.
	out, code := runCLI(t, "inspect", "segment", filepath.Join(dir, topic+"-0", "00000000000000000000.log"), "--records")
	if code != 0 || strings.Count(out, "endTxnMarker: COMMIT coordinatorEpoch: ") != 2 || strings.Count(out, "endTxnMarker: ABORT coordinatorEpoch: ") != 1 {
		t.Fatalf("inspect shows not the two COMMIT and one ABORT markers (exit %d):\n%s", code, out)
	}
}

// TestOpenTransactionHoldsTheLastStableOffset: while a transaction is
// open, read_committed consumers stop before its first record (ListOffsets
// with read_committed gives that offset), and see it all once committed.
func TestOpenTransactionHoldsTheLastStableOffset(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "strata.metrics.listener=127.0.0.1:0")
	const topic = "txn-lso"
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	plain := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, plain, &kgo.Record{Topic: topic, Value: []byte("before")})

	cl := txnClient(t, b.Addr, "txn-lso-producer")
	ctx := testContext(t, clientDeliveryTimeout)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("in-txn")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	produceSync(t, plain, &kgo.Record{Topic: topic, Value: []byte("after")})

	lso, hw := listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false)
	if lso != 1 || hw != 3 {
		t.Fatalf("with a transaction open at offset 1: last stable offset %d, high watermark %d; want 1 and 3", lso, hw)
	}
	requireTxnGauges(t, b, topic, 2, 1)
	reader := newClient(t, b.Addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if got := pollValues(t, reader, 2*time.Second); !slices.Equal(got, []string{"before"}) {
		t.Fatalf("read_committed with the transaction open read %q, want only \"before\"", got)
	}
	kgoReader := kafkaGoReadCommitted(t, b.Addr, topic)
	if v, ok := kafkaGoNext(t, kgoReader, 5*time.Second); !ok || v != "before" {
		t.Fatalf("kafka-go read_committed read %q (%v), want \"before\"", v, ok)
	}
	if v, ok := kafkaGoNext(t, kgoReader, time.Second); ok {
		t.Fatalf("kafka-go read_committed read %q past the last stable offset", v)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := pollValues(t, reader, 2*time.Second); !slices.Equal(got, []string{"in-txn", "after"}) {
		t.Fatalf("read_committed after the commit read %q, want in-txn then after", got)
	}
	if v, ok := kafkaGoNext(t, kgoReader, 5*time.Second); !ok || v != "in-txn" {
		t.Fatalf("kafka-go read_committed after the commit read %q (%v), want \"in-txn\"", v, ok)
	}
	if lso, hw := listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false); lso != hw || hw != 4 {
		t.Fatalf("after the commit: last stable offset %d, high watermark %d; want both 4 (the marker is offset 3)", lso, hw)
	}
	requireTxnGauges(t, b, topic, 0, 0)
}

// requireTxnGauges checks partition 0's last stable offset lag and open
// transactions on b's /metrics.
func requireTxnGauges(t *testing.T, b *Broker, topic string, lag, open float64) {
	t.Helper()
	got := scrape(t, metricsBase(t, b)+"/metrics")
	labels := fmt.Sprintf(`{partition="0",topic=%q}`, topic)
	if l, o := got["strata_last_stable_offset_lag"+labels], got["strata_open_transactions"+labels]; l != lag || o != open {
		t.Fatalf("/metrics: last stable offset lag %v, open transactions %v; want %v and %v", l, o, lag, open)
	}
}

// listedOffset is ListOffsets latest of partition 0: the last stable
// offset (read_committed) or the high watermark.
func listedOffset(t *testing.T, adm *kadm.Client, topic string, committed bool) int64 {
	t.Helper()
	return listedOffsetOf(t, adm, topic, 0, committed)
}

// listedOffsetOf is listedOffset of partition p.
func listedOffsetOf(t *testing.T, adm *kadm.Client, topic string, p int32, committed bool) int64 {
	t.Helper()
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	offs, err := list(testContext(t, 10*time.Second), topic)
	if err != nil || offs.Error() != nil {
		t.Fatalf("listing offsets of %q: %v / %v", topic, err, offs.Error())
	}
	o, ok := offs.Lookup(topic, p)
	if !ok {
		t.Fatalf("no offset listed for %s/%d", topic, p)
	}
	return o.Offset
}

// pollValues polls cl for d and returns the values it got.
func pollValues(t *testing.T, cl *kgo.Client, d time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out []string
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("reading %s/%d: %v", topic, p, err)
			}
		})
		fetches.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

// TestNewProducerInstanceFencesTheOld: a second producer with the same
// transactional id aborts the first one's open transaction and fences it:
// the first can neither produce nor commit any more.
func TestNewProducerInstanceFencesTheOld(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const topic = "txn-fence"
	createTopic(t, newAdmin(t, b.Addr), topic, 1, nil)

	old := txnClient(t, b.Addr, "txn-fence-producer")
	ctx := testContext(t, clientDeliveryTimeout)
	if err := old.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := old.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	successor := txnClient(t, b.Addr, "txn-fence-producer")
	inTxn(t, successor, true, &kgo.Record{Topic: topic, Value: []byte("successor")})

	err := old.EndTransaction(ctx, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the fenced producer's commit: %v, want PRODUCER_FENCED or INVALID_PRODUCER_EPOCH", err)
	}
	writeSentinels(t, b.Addr, topic, 1)
	requirePartitionValues(t, "read_committed", readToSentinels(t, b.Addr, topic, 1, kgo.ReadCommitted()), map[int32][]string{0: {"successor"}})
}

// TestTimedOutTransactionIsAborted: a transaction left open past its
// timeout is aborted by the coordinator (with an epoch bump that fences
// its producer), so it stops holding read_committed consumers back.
func TestTimedOutTransactionIsAborted(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "transaction.abort.timed.out.transaction.cleanup.interval.ms=100")
	const topic = "txn-timeout"
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)

	cl := txnClient(t, b.Addr, "txn-timeout-producer", kgo.TransactionTimeout(time.Second))
	ctx := testContext(t, clientDeliveryTimeout)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("abandoned")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for listedOffset(t, adm, topic, true) != listedOffset(t, adm, topic, false) {
		if time.Now().After(deadline) {
			t.Fatalf("the transaction was not aborted 15 s after its 1 s timeout: last stable offset %d, high watermark %d",
				listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the commit of a transaction the coordinator aborted succeeded")
	}
	writeSentinels(t, b.Addr, topic, 1)
	requirePartitionValues(t, "read_committed", readToSentinels(t, b.Addr, topic, 1, kgo.ReadCommitted()), map[int32][]string{})
}

// TestExactlyOnceConsumeTransformProduce runs franz-go's
// GroupTransactSession: records are read from an input topic, written to an
// output topic and the input offsets committed, all in one transaction per
// poll (AddOffsetsToTxn, TxnOffsetCommit). The output, read committed,
// holds each input record exactly once, and the group's committed offsets
// are the input's end.
func TestExactlyOnceConsumeTransformProduce(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	const in, out, partitions, n = "eos-in", "eos-out", 2, 400
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, in, partitions, nil)
	createTopic(t, adm, out, partitions, nil)
	plain := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var inputs []*kgo.Record
	for i := range n {
		inputs = append(inputs, &kgo.Record{Topic: in, Partition: int32(i % partitions), Value: fmt.Appendf(nil, "v%d", i)})
	}
	produceSync(t, plain, inputs...)

	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(b.Addr),
		kgo.DialTimeout(clientDialTimeout),
		kgo.TransactionalID("eos-app"),
		kgo.TransactionTimeout(30*time.Second),
		kgo.ConsumerGroup("eos-group"),
		kgo.ConsumeTopics(in),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableClientMetrics(),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ctx := testContext(t, 60*time.Second)
	done := 0
	for done < n {
		fetches := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("transformed %d of %d records: %v", done, n, ctx.Err())
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("reading %s/%d: %v", topic, p, err) })
		if err := sess.Begin(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		var outs []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			outs = append(outs, &kgo.Record{Topic: out, Partition: r.Partition, Value: append([]byte("t-"), r.Value...)})
		})
		if err := sess.ProduceSync(ctx, outs...).FirstErr(); err != nil {
			t.Fatalf("producing: %v", err)
		}
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Fatalf("ending the transaction: %v", err)
		}
		if committed {
			done += len(outs)
		}
	}
	writeSentinels(t, b.Addr, out, partitions)
	want := map[int32][]string{}
	for _, r := range inputs {
		want[r.Partition] = append(want[r.Partition], "t-"+string(r.Value))
	}
	requirePartitionValues(t, "output read_committed", readToSentinels(t, b.Addr, out, partitions, kgo.ReadCommitted()), want)

	offsets, err := adm.FetchOffsets(testContext(t, 10*time.Second), "eos-group")
	if err != nil || offsets.Error() != nil {
		t.Fatalf("fetching the group's offsets: %v / %v", err, offsets.Error())
	}
	for p := range int32(partitions) {
		o, ok := offsets.Lookup(in, p)
		if !ok || o.At != n/partitions {
			t.Fatalf("committed offset of %s/%d: %+v (found %v), want %d", in, p, o, ok, n/partitions)
		}
	}
}

// TestTransactionsSurviveKill: a committed transaction, an aborted one and
// one left open when the broker is killed. After the restart the committed
// records are visible, the aborted ones are not, and the open transaction
// is aborted once its timeout passes, releasing read_committed consumers.
func TestTransactionsSurviveKill(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "transaction.abort.timed.out.transaction.cleanup.interval.ms=100")
	const topic, partitions = "txn-kill", 2
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, partitions, nil)

	cl := txnClient(t, b.Addr, "txn-kill-producer", kgo.TransactionTimeout(2*time.Second))
	committed := txnRecords(topic, "c", partitions, 50)
	inTxn(t, cl, true, committed...)
	inTxn(t, cl, false, txnRecords(topic, "ab", partitions, 50)...)
	ctx := testContext(t, clientDeliveryTimeout)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, txnRecords(topic, "open", partitions, 10)...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b.Kill()
	b.Restart()

	writeSentinels(t, b.Addr, topic, partitions)
	requirePartitionValues(t, "read_committed after kill -9", readToSentinels(t, b.Addr, topic, partitions, kgo.ReadCommitted()), valuesByPartition(committed))
}
