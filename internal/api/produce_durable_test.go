package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
)

// TestAcknowledgedWritesAreDurable: what the broker acknowledges with
// acks=all is fdatasynced before the answer leaves (issue 2's durability:
// a crash of the machine, not only of the process, keeps it). kill -9
// leaves the page cache in place, so no end-to-end crash test can tell a
// synced answer from an unsynced one; this checks each partition's durable
// end when the answer is ready. A produce of three partitions (their syncs
// run in parallel), and a transaction marker, which a coordinator waits
// for before it completes the transaction, and an offset commit, which
// the group coordinator answers once its record is written.
func TestAcknowledgedWritesAreDurable(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("durable", nil, []int32{1}, []int32{1}, []int32{1})
	rh.withGroups()

	r := kmsg.NewPtrProduceRequest()
	r.Acks, r.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "durable"
	for idx := range int32(3) {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = idx, oneRecordBatch("v")
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	resp := rh.handle(0, 9, r, "User:ANONYMOUS").(*kmsg.ProduceResponse)
	for _, sp := range resp.Topics[0].Partitions {
		if sp.ErrorCode != 0 {
			t.Fatalf("durable-%d: error %d", sp.Partition, sp.ErrorCode)
		}
		if got := rh.partition("durable", sp.Partition).DurableEnd(); got < base.Offset(sp.BaseOffset+1) {
			t.Errorf("durable-%d: acks=all answered offset %d with the log durable below %d only", sp.Partition, sp.BaseOffset, got)
		}
	}

	p := rh.partition("durable", 0)
	rh.openTxn(p, 7, 0)
	end := p.Offsets().LogEnd
	if codes := rh.writeMarkers("User:broker", 7, 0, true, 0, markerTarget{"durable", 0}); codes[0] != 0 {
		t.Fatalf("commit marker: error %d", codes[0])
	}
	if got := p.DurableEnd(); got < end+1 {
		t.Errorf("the commit marker at offset %d was answered with the log durable below %d only", end, got)
	}

	code := rh.retryLoading(func() int16 {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.Generation = groupOnPartition(t, 0), -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "durable"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, 1, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return rh.handle(8, 8, r, "User:ANONYMOUS").(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	})
	if code != 0 {
		t.Fatalf("OffsetCommit: error %d", code)
	}
	commits := rh.partition(offsets.TopicName, 0)
	if end, got := commits.Offsets().LogEnd, commits.DurableEnd(); end == 0 || got < end {
		t.Errorf("an offset commit was answered with %s durable below %d of %d", offsets.TopicName, got, end)
	}
}
