package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAdminAbortsAnOpenTransaction is kafka-transactions.sh abort (KIP-664,
// Admin.abortTransaction): an open transaction found with DescribeProducers
// is aborted from an admin client by a WriteTxnMarkers to the partition's
// leader with the producer's id and epoch and its coordinator epoch (0 when
// the producer has seen no marker yet, as the tool sends). The last stable
// offset moves past it at once, read_committed readers skip its records
// and read what follows, and the coordinator, when it later times the
// transaction out, aborts it again without harm: the transactional id
// starts and commits a new transaction afterwards.
func TestAdminAbortsAnOpenTransaction(t *testing.T) {
	t.Parallel()
	b := startBroker(t, t.TempDir(), "transaction.abort.timed.out.transaction.cleanup.interval.ms=100")
	const topic, txnID = "txn-admin-abort", "txn-admin-abort-producer"
	adm := newAdmin(t, b.Addr)
	createTopic(t, adm, topic, 1, nil)
	ctx := testContext(t, clientDeliveryTimeout)

	hanging := txnClient(t, b.Addr, txnID, kgo.TransactionTimeout(4*time.Second))
	if err := hanging.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := hanging.ProduceSync(ctx, txnRecords(topic, "hanging", 1, 2)...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	produceSync(t, newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner())), txnRecords(topic, "after", 1, 3)...)
	if lso := listedOffset(t, adm, topic, true); lso != 0 {
		t.Fatalf("last stable offset %d with a transaction open at 0", lso)
	}

	var open *kmsg.WriteTxnMarkersRequestMarker
	for id, p := range describeProducers(t, adm, topic) {
		if p.CurrentTxnStartOffset != 0 {
			continue
		}
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed = id, p.ProducerEpoch, false
		m.CoordinatorEpoch = max(p.CoordinatorEpoch, 0) // the tool's coordinatorEpoch().orElse(0)
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = topic, []int32{0}
		m.Topics = append(m.Topics, mt)
		open = &m
	}
	if open == nil {
		t.Fatal("DescribeProducers lists no transaction starting at offset 0")
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Markers = append(req.Markers, *open)
	resp, err := req.RequestWith(ctx, newClient(t, b.Addr).Broker(int(brokerNodeID(t, adm))))
	if err != nil {
		t.Fatalf("WriteTxnMarkers: %v", err)
	}
	if code := resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("WriteTxnMarkers answered %v", kerr.ErrorForCode(code))
	}
	if lso, hw := listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false); lso != hw {
		t.Fatalf("after the abort: last stable offset %d, high watermark %d", lso, hw)
	}
	writeSentinels(t, b.Addr, topic, 1)
	want := map[int32][]string{0: {"after-0-0", "after-0-1", "after-0-2"}}
	requirePartitionValues(t, "read_committed after the abort", readToSentinels(t, b.Addr, topic, 1, kgo.ReadCommitted()), want)

	// The coordinator times the transaction out and aborts it with a
	// bumped epoch, which fences the hanging producer.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if p := describeProducers(t, adm, topic)[open.ProducerID]; p.ProducerEpoch > open.ProducerEpoch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the coordinator did not abort the timed-out transaction within 20 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := hanging.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the hanging producer committed after its transaction was aborted")
	}
	inTxn(t, txnClient(t, b.Addr, txnID), true, txnRecords(topic, "next", 1, 1)...)
	// EndTxn is answered once the outcome is durable; the marker follows.
	deadline = time.Now().Add(10 * time.Second)
	for lso, hw := listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false); lso != hw; lso, hw = listedOffset(t, adm, topic, true), listedOffset(t, adm, topic, false) {
		if time.Now().After(deadline) {
			t.Fatalf("at the end: last stable offset %d, high watermark %d, 10 s after the commit", lso, hw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantAll := append(want[0], sentinel, "next-0-0")
	rc := newClient(t, b.Addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var got []string
	for ctx := testContext(t, consumeTimeout); len(got) < len(wantAll) && ctx.Err() == nil; {
		rc.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, wantAll) {
		t.Fatalf("read_committed at the end: %q, want %q", got, wantAll)
	}
}
