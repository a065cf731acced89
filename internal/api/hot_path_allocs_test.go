package api

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/record"
)

// TestHotPathsDoNotAllocatePerRecordOrBatch: a Produce costs the same
// allocations for one record as for 200, and a Fetch the same for one
// batch as for forty, copied or served as a file region. Log bytes stay
// off the Go heap; what a request allocates is its own bookkeeping.
func TestHotPathsDoNotAllocatePerRecordOrBatch(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("t", nil, []int32{1})

	produceAllocs := func(records int) float64 {
		batch := producerBatch(records, make([]byte, 50))
		buf := make([]byte, len(batch))
		return testing.AllocsPerRun(20, func() {
			copy(buf, batch) // the append assigns offsets in place
			rh.produceOne("t", buf)
		})
	}
	if one, many := produceAllocs(1), produceAllocs(200); many > one+1 {
		t.Errorf("a Produce of 200 records allocates %.1f times, of one record %.1f", many, one)
	}

	const batchRecords = 10
	batch := producerBatch(batchRecords, make([]byte, 100))
	for range 2 * spliceMinBytes / len(batch) * 2 {
		rh.produceOne("t", append([]byte(nil), batch...))
	}
	fetchAllocs := func(batches int) float64 {
		return testing.AllocsPerRun(20, func() { rh.fetchOne("t", int32(batches*len(batch))) })
	}
	if 40*len(batch) >= spliceMinBytes {
		t.Fatalf("forty batches of %d bytes reach the region threshold", len(batch))
	}
	oneBatch, copied := fetchAllocs(1), fetchAllocs(40)
	if copied > oneBatch+1 {
		t.Errorf("a Fetch of forty batches allocates %.1f times, of one batch %.1f", copied, oneBatch)
	}
	regionBatches := spliceMinBytes/len(batch) + 1
	if region, moreRegion := fetchAllocs(regionBatches), fetchAllocs(2*regionBatches); moreRegion > region+1 {
		t.Errorf("a region Fetch of %d batches allocates %.1f times, of %d batches %.1f", 2*regionBatches, moreRegion, regionBatches, region)
	}
}

// producerBatch is a producer's uncompressed batch of n records, each with
// the given value.
func producerBatch(n int, value []byte) []byte {
	var records []byte
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), Value: value}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
	}
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n),
		LastOffsetDelta: int32(n - 1), FirstTimestamp: now, MaxTimestamp: now, Records: records}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-record.LogOverhead))
	record.WriteCRC(out)
	return out
}

// produceOne sends batch to partition 0 of topic with acks=1.
func (rh *replicaHarness) produceOne(topic string, batch []byte) {
	rh.t.Helper()
	r := kmsg.NewPtrProduceRequest()
	r.Acks, r.TimeoutMillis = 1, 5000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = batch
	tp.Partitions = append(tp.Partitions, pp)
	r.Topics = append(r.Topics, tp)
	resp := rh.handle(0, 9, r, "User:ANONYMOUS").(*kmsg.ProduceResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 {
		rh.t.Fatalf("produce: error %d", p.ErrorCode)
	}
}

// fetchOne is a consumer's Fetch v11 of partition 0 of topic from offset
// 0, of up to maxBytes.
func (rh *replicaHarness) fetchOne(topic string, maxBytes int32) {
	rh.t.Helper()
	r := kmsg.NewPtrFetchRequest()
	r.ReplicaID, r.MaxBytes = -1, maxBytes
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = maxBytes
	ft.Partitions = append(ft.Partitions, fp)
	r.Topics = append(r.Topics, ft)
	resp := rh.handle(1, 11, r, "User:ANONYMOUS").(*kmsg.FetchResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		rh.t.Fatalf("fetch: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
	}
}
