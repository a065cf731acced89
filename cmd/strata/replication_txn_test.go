package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/txn"
	"github.com/strata-broker/strata/internal/metadata"
)

// txnCluster starts nodes 1 and 2 with the internal topics made before any
// client asks for them, so that the transaction coordinator is on node 1
// (__transaction_state has one partition, there) and __consumer_offsets
// partition 0 is led by node 1, partition 1 by node 2. Topic "t" has
// partition 0 led by node 2 (node 1 follows it) and partition 1 on node 1
// alone.
//
// Partition verification (KIP-890 part 1) is on, as by default: node 2,
// leading t-0, verifies a transaction's first batch there with the
// coordinator on node 1 (AddPartitionsToTxn v4).
func txnCluster(t *testing.T) map[int32]*replicaNode {
	t.Helper()
	meta := openTestQuorum(t)
	return startTwoNodes(t, meta,
		metadata.CreateTopic{Name: txn.TopicName, Assignments: [][]int32{{1}}, Configs: map[string]string{"cleanup.policy": "compact"}},
		metadata.CreateTopic{Name: offsets.TopicName, Assignments: [][]int32{{1}, {2}}, Configs: map[string]string{"cleanup.policy": "compact"}},
		metadata.CreateTopic{Name: "t", Assignments: [][]int32{{2, 1}, {1}}})
}

// TestTxnMarkersReachPartitionsLedByAnotherBroker: a transaction whose
// coordinator is on node 1 commits and aborts records on a partition led
// by node 2 (its markers go there as WriteTxnMarkers) and on one led by
// node 1: a read_committed consumer sees the committed records and none of
// the aborted ones, and the producer's next transaction starts (it could
// not while a marker was missing).
func TestTxnMarkersReachPartitionsLedByAnotherBroker(t *testing.T) {
	nodes := txnCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	producer, err := kgo.NewClient(kgo.SeedBrokers(nodes[1].addr), kgo.DisableClientMetrics(),
		kgo.TransactionalID("remote-markers"), kgo.DefaultProduceTopic("t"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	txnOf := func(commit kgo.TransactionEndTry, values ...string) {
		t.Helper()
		if err := producer.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			for _, p := range []int32{0, 1} {
				if err := producer.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
					t.Fatalf("producing %q to t-%d: %v", v, p, err)
				}
			}
		}
		if err := producer.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("ending the transaction of %q: %v", values, err)
		}
	}
	txnOf(kgo.TryCommit, "c1", "c2")
	txnOf(kgo.TryAbort, "a1")
	txnOf(kgo.TryCommit, "c3")

	consumer, err := kgo.NewClient(kgo.SeedBrokers(nodes[2].addr), kgo.DisableClientMetrics(),
		kgo.ConsumeTopics("t"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	seen := map[int32][]string{}
	for !slices.Contains(seen[0], "c3") || !slices.Contains(seen[1], "c3") {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read_committed read %v: %v", seen, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("consuming %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { seen[r.Partition] = append(seen[r.Partition], string(r.Value)) })
	}
	for _, p := range []int32{0, 1} {
		if want := []string{"c1", "c2", "c3"}; !slices.Equal(seen[p], want) {
			t.Errorf("read_committed t-%d: %q, want %q", p, seen[p], want)
		}
	}
}

// TestTxnOffsetCommitToAGroupCoordinatedByAnotherBroker: offsets committed
// in a transaction coordinated on node 1 to a group coordinated on node 2
// become visible once the transaction commits: the marker of
// __consumer_offsets partition 1 reaches node 2's group coordinator.
func TestTxnOffsetCommitToAGroupCoordinatedByAnotherBroker(t *testing.T) {
	nodes := txnCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	group := ""
	for _, g := range []string{"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9"} {
		if offsets.PartitionFor(g, 2) == 1 {
			group = g
			break
		}
	}
	if group == "" {
		t.Fatal("no group id on __consumer_offsets partition 1")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(nodes[1].addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const txnID = "remote-offsets"

	ir := initTxnProducer(ctx, t, cl, txnID)
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = txnID, ir.ProducerID, ir.ProducerEpoch, group
	retryCode(ctx, t, "AddOffsetsToTxn", func() (int16, *kmsg.AddOffsetsToTxnResponse) {
		r, err := add.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return r.ErrorCode, r
	})
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = txnID, group, ir.ProducerID, ir.ProducerEpoch
	commit.Generation = -1
	ct := kmsg.NewTxnOffsetCommitRequestTopic()
	ct.Topic = "t"
	cp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset, cp.LeaderEpoch = 0, 2, -1
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	retryCode(ctx, t, "TxnOffsetCommit", func() (int16, *kmsg.TxnOffsetCommitResponse) {
		r, err := commit.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			t.Fatalf("TxnOffsetCommit answered %+v", r)
		}
		return r.Topics[0].Partitions[0].ErrorCode, r
	})
	if got := committedOffset(ctx, t, cl, group); got != -1 {
		t.Fatalf("an offset of an open transaction is visible: %d", got)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = txnID, ir.ProducerID, ir.ProducerEpoch, true
	retryCode(ctx, t, "EndTxn", func() (int16, *kmsg.EndTxnResponse) {
		r, err := end.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return r.ErrorCode, r
	})
	waitUntil(t, "the committed offset on node 2's coordinator", func() bool { return committedOffset(ctx, t, cl, group) == 2 })
}

// retryCode runs call until its code is not a retriable one, and fails
// the test unless that code is 0.
func retryCode[R any](ctx context.Context, t *testing.T, what string, call func() (int16, R)) R {
	t.Helper()
	for {
		code, r := call()
		err := kerr.ErrorForCode(code)
		if err == nil {
			return r
		}
		if !kerr.IsRetriable(err) && code != kerr.ConcurrentTransactions.Code || ctx.Err() != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// committedOffset is group's committed offset of t-0, -1 when none.
func committedOffset(ctx context.Context, t *testing.T, cl *kgo.Client, group string) int64 {
	t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Group = group
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	r.Topics = append(r.Topics, rt)
	return retryCode(ctx, t, "OffsetFetch", func() (int16, int64) {
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			return resp.ErrorCode, 0
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("OffsetFetch answered %+v", resp)
		}
		p := resp.Topics[0].Partitions[0]
		return p.ErrorCode, p.Offset
	})
}

// initTxnProducer gets a producer id and epoch for txnID through cl,
// retrying the coordinator's retriable answers.
func initTxnProducer(ctx context.Context, t *testing.T, cl *kgo.Client, txnID string) *kmsg.InitProducerIDResponse {
	t.Helper()
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr(txnID), 60_000
	return retryCode(ctx, t, "InitProducerID", func() (int16, *kmsg.InitProducerIDResponse) {
		r, err := init.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return r.ErrorCode, r
	})
}
