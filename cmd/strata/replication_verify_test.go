package main

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/record"
)

// TestTxnProduceVerifiedByACoordinatorOnAnotherBroker: node 2, leading
// t-0, asks the coordinator on node 1 (AddPartitionsToTxn v4, verify only)
// before it appends a producer's first transactional batch there: refused
// with INVALID_TXN_STATE while the transaction does not hold t-0 (a late
// retry, a zombie), appended once the producer added t-0.
func TestTxnProduceVerifiedByACoordinatorOnAnotherBroker(t *testing.T) {
	nodes := txnCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(nodes[1].addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	leader, err := kgo.NewClient(kgo.SeedBrokers(nodes[2].addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	const txnID = "remote-verify"

	ir := initTxnProducer(ctx, t, cl, txnID)
	addPartition := func(p int32) {
		t.Helper()
		add := kmsg.NewPtrAddPartitionsToTxnRequest()
		add.TransactionalID, add.ProducerID, add.ProducerEpoch = txnID, ir.ProducerID, ir.ProducerEpoch
		at := kmsg.NewAddPartitionsToTxnRequestTopic()
		at.Topic, at.Partitions = "t", []int32{p}
		add.Topics = append(add.Topics, at)
		retryCode(ctx, t, "AddPartitionsToTxn", func() (int16, struct{}) {
			r, err := add.RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
				t.Fatalf("AddPartitionsToTxn answered %+v", r)
			}
			return r.Topics[0].Partitions[0].ErrorCode, struct{}{}
		})
	}
	// produce sends the producer's first batch of t-0 to node 2 until the
	// answer is not a retriable one.
	produce := func() int16 {
		t.Helper()
		r := kmsg.NewPtrProduceRequest()
		r.TransactionID, r.Acks, r.TimeoutMillis = kmsg.StringPtr(txnID), -1, 10_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = 0, transactionalBatch(ir.ProducerID, ir.ProducerEpoch, "v")
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		for {
			// Produce v11, of transaction version 1: from v12 on the
			// leader adds the partition for the client instead.
			resp, err := leader.SeedBrokers()[0].Request(ctx, producePinned{r})
			if err != nil {
				t.Fatal(err)
			}
			code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
			if err := kerr.ErrorForCode(code); err == nil || !kerr.IsRetriable(err) || ctx.Err() != nil {
				return code
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	addPartition(1)
	if code := produce(); code != kerr.InvalidTxnState.Code {
		t.Fatalf("a batch of t-0, which the transaction does not hold: error %d, want INVALID_TXN_STATE", code)
	}
	addPartition(0)
	if code := produce(); code != 0 {
		t.Fatalf("a batch of t-0 once the transaction holds it: error %d", code)
	}
}

// producePinned is a Produce request franz-go sends at v11 at most.
type producePinned struct{ *kmsg.ProduceRequest }

func (producePinned) MaxVersion() int16 { return 11 }

// transactionalBatch is a transactional producer's first batch (sequence
// 0) of one record.
func transactionalBatch(pid int64, epoch int16, value string) []byte {
	r := kmsg.Record{Value: []byte(value)}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{Magic: 2, Attributes: 0x10, ProducerID: pid, ProducerEpoch: epoch, NumRecords: 1,
		FirstTimestamp: now, MaxTimestamp: now, Records: r.AppendTo(nil)}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-record.LogOverhead))
	record.WriteCRC(out)
	return out
}
