package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDescribeProducers: kadm's DescribeProducers (KIP-664, what
// kafka-transactions.sh describe-producers sends) lists an idempotent and
// a transactional producer with their epochs and last sequences, and the
// open transaction's first offset until its commit marker lands.
func TestDescribeProducers(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "describe-producers"
	createTopic(t, adm, topic, 1, nil)
	ctx := testContext(t, clientDeliveryTimeout)
	values := func(prefix string, n int) []*kgo.Record {
		var out []*kgo.Record
		for i := range n {
			out = append(out, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%s-%d", prefix, i)})
		}
		return out
	}
	startMs := time.Now().UnixMilli()

	idem := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, idem, values("idem", 3)...) // offsets 0-2, sequences 0-2
	produceSync(t, idem, values("idem", 2)...) // offsets 3-4, sequences 3-4

	txn := txnClient(t, b.Addr, "describe-producers-txn")
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, values("txn", 2)...).FirstErr(); err != nil { // offsets 5-6
		t.Fatal(err)
	}
	produceSync(t, idem, values("idem-during-txn", 1)...) // offset 7, sequence 5

	idemID, idemEpoch, err := idem.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txnID, txnEpoch, err := txn.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if idemID == txnID {
		t.Fatalf("both producers have id %d", idemID)
	}

	got := describeProducers(t, adm, topic)
	if len(got) != 2 {
		t.Fatalf("DescribeProducers lists %d producers, want 2: %+v", len(got), got)
	}
	requireProducer(t, "idempotent", got, idemID, idemEpoch, 5, -1, startMs)
	requireProducer(t, "transactional, open", got, txnID, txnEpoch, 1, 5, startMs)

	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// EndTxn is answered once the outcome is durable; the marker follows.
	deadline := time.Now().Add(10 * time.Second)
	for got = describeProducers(t, adm, topic); got[txnID].CurrentTxnStartOffset != -1; got = describeProducers(t, adm, topic) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the commit the transaction still starts at %d", got[txnID].CurrentTxnStartOffset)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// franz-go uses transaction version 2, which Strata finalizes
	// (KIP-890): the commit bumps the producer's epoch, and its marker,
	// written at the new epoch, leaves no sequence (it is not a data
	// batch).
	requireProducer(t, "idempotent, after the commit", got, idemID, idemEpoch, 5, -1, startMs)
	requireProducer(t, "transactional, committed", got, txnID, txnEpoch+1, -1, -1, startMs)
	if ce := got[txnID].CoordinatorEpoch; ce < 0 {
		t.Fatalf("after its commit marker the producer's coordinator epoch is %d", ce)
	}
	if ce := got[idemID].CoordinatorEpoch; ce != -1 {
		t.Fatalf("a producer that never saw a marker has coordinator epoch %d, want -1 as from Kafka", ce)
	}
}

// describeProducers is kadm's DescribeProducers of partition 0 of topic,
// which must answer without error.
func describeProducers(t *testing.T, adm *kadm.Client, topic string) kadm.DescribedProducers {
	t.Helper()
	described, err := adm.DescribeProducers(testContext(t, 15*time.Second), kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatalf("DescribeProducers: %v", err)
	}
	p, ok := described[topic].Partitions[0]
	if !ok {
		t.Fatalf("DescribeProducers did not answer %s/0: %+v", topic, described)
	}
	if p.Err != nil {
		t.Fatalf("DescribeProducers %s/0: %v (%s)", topic, p.Err, p.ErrMessage)
	}
	return p.ActiveProducers
}

func requireProducer(t *testing.T, what string, got kadm.DescribedProducers, id int64, epoch int16, lastSeq int32, txnStart int64, sinceMs int64) {
	t.Helper()
	d, ok := got[id]
	if !ok {
		t.Fatalf("%s: producer %d not listed: %+v", what, id, got)
	}
	if d.ProducerEpoch != epoch || d.LastSequence != lastSeq || d.CurrentTxnStartOffset != txnStart {
		t.Fatalf("%s: producer %d has epoch %d, last sequence %d, transaction start %d; want %d, %d, %d",
			what, id, d.ProducerEpoch, d.LastSequence, d.CurrentTxnStartOffset, epoch, lastSeq, txnStart)
	}
	if nowMs := time.Now().UnixMilli(); d.LastTimestamp < sinceMs || d.LastTimestamp > nowMs {
		t.Fatalf("%s: producer %d last produced at %d, not within [%d, %d]", what, id, d.LastTimestamp, sinceMs, nowMs)
	}
}

// TestDescribeProducersErrors: partitions are answered in request order,
// each with Kafka's error; a raw request reaches the broker past the
// client's own metadata checks.
func TestDescribeProducersErrors(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir())
	adm := newAdmin(t, b.Addr)
	const topic = "describe-producers-errors"
	createTopic(t, adm, topic, 1, nil)
	cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: []byte("v")})

	req := kmsg.NewPtrDescribeProducersRequest()
	for _, rt := range []struct {
		topic      string
		partitions []int32
	}{
		{"describe-producers-missing", []int32{0, 1}},
		{topic, []int32{0, 3, -1}},
		{"bad/name", []int32{0}},
	} {
		reqTopic := kmsg.NewDescribeProducersRequestTopic()
		reqTopic.Topic, reqTopic.Partitions = rt.topic, rt.partitions
		req.Topics = append(req.Topics, reqTopic)
	}
	resp, err := req.RequestWith(testContext(t, 15*time.Second), cl.SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		topic     string
		partition int32
		code      int16
		producers int
	}
	want := []answer{
		{"describe-producers-missing", 0, kerr.UnknownTopicOrPartition.Code, 0},
		{"describe-producers-missing", 1, kerr.UnknownTopicOrPartition.Code, 0},
		{topic, 0, 0, 1},
		{topic, 3, kerr.UnknownTopicOrPartition.Code, 0},
		{topic, -1, kerr.UnknownTopicOrPartition.Code, 0},
		{"bad/name", 0, kerr.InvalidTopicException.Code, 0},
	}
	var got []answer
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			got = append(got, answer{rt.Topic, rp.Partition, rp.ErrorCode, len(rp.ActiveProducers)})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("answers (topic, partition, error code, producers):\n%v\nwant\n%v", got, want)
	}
}
