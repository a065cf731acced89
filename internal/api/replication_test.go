package api

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
)

// TestReplicaFetchOfPartitionsNotLedHere: a follower's fetch of a
// partition this node follows, or does not host, is
// NOT_LEADER_OR_FOLLOWER; so is one from a broker that is not a replica,
// and one of an unknown partition is UNKNOWN_TOPIC_OR_PARTITION.
func TestReplicaFetchOfPartitionsNotLedHere(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("elsewhere", nil, []int32{2, 1}, []int32{2, 3}, []int32{1, 2})
	for _, tc := range []struct {
		name string
		id   int32
		idx  int32
		want int16
	}{
		{"followed here", 2, 0, kerr.NotLeaderForPartition.Code},
		{"not hosted here", 2, 1, kerr.NotLeaderForPartition.Code},
		{"from a broker that is no replica", 3, 2, kerr.NotLeaderForPartition.Code},
		{"unknown partition", 2, 9, kerr.UnknownTopicOrPartition.Code},
	} {
		if sp := rh.replicaFetch(tc.id, "elsewhere", tc.idx, 0, -1, 0); sp.ErrorCode != tc.want {
			t.Errorf("%s: error %d, want %d", tc.name, sp.ErrorCode, tc.want)
		}
	}
}

// TestReplicaFetchReadsToTheLogEnd: a follower reads past the high
// watermark, up to the log end, and hears the high watermark (which its
// fetches move); a consumer still reads below the high watermark only.
func TestReplicaFetchReadsToTheLogEnd(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("tail", nil, []int32{1, 2, 3})
	p := rh.partition("tail", 0)
	rh.produceRecords(p, 4)

	sp := rh.replicaFetch(2, "tail", 0, 0, -1, 0)
	if first, next, n := batchOffsets(sp.RecordBatches); sp.ErrorCode != 0 || first != 0 || next != 4 || n != 4 {
		t.Fatalf("follower 2 from 0: error %d, batches [%d, %d) (%d); want all 4 records", sp.ErrorCode, first, next, n)
	}
	if sp.HighWatermark != 0 || sp.LogStartOffset != 0 || sp.LastStableOffset != 0 {
		t.Fatalf("follower 2 hears high watermark %d, log start %d, last stable %d; want 0, 0, 0", sp.HighWatermark, sp.LogStartOffset, sp.LastStableOffset)
	}
	if sp := rh.replicaFetch(3, "tail", 0, 2, 0, 0); sp.HighWatermark != 0 {
		t.Fatalf("after 3 fetched from 2, high watermark %d, want 0 (2 is at 0)", sp.HighWatermark)
	}
	sp = rh.replicaFetch(2, "tail", 0, 4, 0, 0)
	if sp.ErrorCode != 0 || len(sp.RecordBatches) != 0 || sp.HighWatermark != 2 {
		t.Fatalf("follower 2 at the log end: error %d, %d bytes, high watermark %d; want nothing new and 2", sp.ErrorCode, len(sp.RecordBatches), sp.HighWatermark)
	}

	consumer := kmsg.NewPtrFetchRequest()
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "tail"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	consumer.Topics = append(consumer.Topics, rt)
	cp := onlyPartition(t, rh.handle(1, 12, consumer, "User:ANONYMOUS").(*kmsg.FetchResponse))
	if first, next, _ := batchOffsets(cp.RecordBatches); cp.ErrorCode != 0 || first != 0 || next != 2 || cp.HighWatermark != 2 {
		t.Fatalf("consumer: error %d, batches [%d, %d), high watermark %d; want [0, 2) and 2", cp.ErrorCode, first, next, cp.HighWatermark)
	}
}

// TestReplicaFetchDivergingAndOutOfRange: a follower whose log diverges
// hears the leader's epoch and its end, with no records; one the leader
// cannot place is OFFSET_OUT_OF_RANGE. Neither moves its state.
func TestReplicaFetchDivergingAndOutOfRange(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("diverge", nil, []int32{1, 2, 3})
	rh.produceRecords(rh.partition("diverge", 0), 4)
	sp := rh.replicaFetch(2, "diverge", 0, 6, 0, 0)
	if sp.ErrorCode != 0 || sp.DivergingEpoch.Epoch != 0 || sp.DivergingEpoch.EndOffset != 4 || len(sp.RecordBatches) != 0 {
		t.Fatalf("a follower past the leader's end of epoch 0: error %d, diverging %+v, %d bytes; want epoch 0 ending at 4, no records",
			sp.ErrorCode, sp.DivergingEpoch, len(sp.RecordBatches))
	}
	if sp.HighWatermark != 0 || sp.LogStartOffset != 0 {
		t.Fatalf("a diverging answer without offsets: high watermark %d, log start %d", sp.HighWatermark, sp.LogStartOffset)
	}
	if sp := rh.replicaFetch(2, "diverge", 0, 2, 3, 0); sp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("a follower with an epoch the leader never had: error %d, want OFFSET_OUT_OF_RANGE", sp.ErrorCode)
	}
	if sp := rh.replicaFetch(2, "diverge", 0, 9, -1, 0); sp.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("a follower past the log end: error %d, want OFFSET_OUT_OF_RANGE", sp.ErrorCode)
	}
	// A fetch with an older leader epoch than the partition's is fenced,
	// as a consumer's.
	r := rh.replicaFetchRequest(2, "diverge", 0, 0, -1, 0)
	r.Topics[0].Partitions[0].CurrentLeaderEpoch = 1
	if sp := onlyPartition(t, rh.handle(1, 15, r, "User:ANONYMOUS").(*kmsg.FetchResponse)); sp.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("a fetch in a future leader epoch: error %d, want UNKNOWN_LEADER_EPOCH", sp.ErrorCode)
	}
}

// TestReplicaFetchIsSessionless: a follower's fetch that asks to open a
// session is answered without one; an incremental one finds none.
func TestReplicaFetchIsSessionless(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("nosession", nil, []int32{1, 2})
	r := rh.replicaFetchRequest(2, "nosession", 0, 0, -1, 0)
	r.SessionEpoch = 0
	if resp := rh.handle(1, 15, r, "User:ANONYMOUS").(*kmsg.FetchResponse); resp.ErrorCode != 0 || resp.SessionID != 0 {
		t.Fatalf("a follower asking for a session: error %d, session %d; want none", resp.ErrorCode, resp.SessionID)
	}
	r = rh.replicaFetchRequest(2, "nosession", 0, 0, -1, 0)
	r.SessionID, r.SessionEpoch = 5, 1
	if resp := rh.handle(1, 15, r, "User:ANONYMOUS").(*kmsg.FetchResponse); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("a follower's incremental fetch: error %d, want FETCH_SESSION_ID_NOT_FOUND", resp.ErrorCode)
	}
	if n, _ := rh.h.FetchSessions(); n != 0 {
		t.Fatalf("%d fetch sessions open after follower fetches, want 0", n)
	}
}

// TestReplicaFetchBeforeV15: before Fetch v15 the replica id is ReplicaID
// and no broker epoch comes with it.
func TestReplicaFetchBeforeV15(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("v12", nil, []int32{1, 2})
	rh.produceRecords(rh.partition("v12", 0), 2)
	r := rh.replicaFetchRequest(2, "v12", 0, 0, -1, 0)
	r.ReplicaID = 2
	sp := onlyPartition(t, rh.handle(1, 12, r, "User:ANONYMOUS").(*kmsg.FetchResponse))
	if _, next, _ := batchOffsets(sp.RecordBatches); sp.ErrorCode != 0 || next != 2 || sp.HighWatermark != 0 {
		t.Fatalf("a v12 follower fetch: error %d, records to %d, high watermark %d; want both records and 0", sp.ErrorCode, next, sp.HighWatermark)
	}
}

// TestReplicaFetchNeedsClusterAction: with an authorizer, a follower
// without CLUSTER_ACTION on the cluster gets TOPIC_AUTHORIZATION_FAILED
// for every partition (Kafka's rule); a super user is served.
func TestReplicaFetchNeedsClusterAction(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:broker",
	})
	rh.createTopic("guarded", nil, []int32{1, 2})
	r := rh.replicaFetchRequest(2, "guarded", 0, 0, -1, 0)
	if sp := onlyPartition(t, rh.handle(1, 15, r, "User:mallory").(*kmsg.FetchResponse)); sp.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("a follower fetch without CLUSTER_ACTION: error %d, want TOPIC_AUTHORIZATION_FAILED", sp.ErrorCode)
	}
	r = rh.replicaFetchRequest(2, "guarded", 0, 0, -1, 0)
	if sp := onlyPartition(t, rh.handle(1, 15, r, "User:broker").(*kmsg.FetchResponse)); sp.ErrorCode != 0 {
		t.Fatalf("a follower fetch by a super user: error %d", sp.ErrorCode)
	}
}

// TestReplicaLongPollWaitsForTheLogEnd: a follower's long poll at the log
// end is answered by new data, not by a moved high watermark (Kafka's
// DelayedFetch for followers).
func TestReplicaLongPollWaitsForTheLogEnd(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("poll", nil, []int32{1, 2, 3})
	p := rh.partition("poll", 0)
	rh.produceRecords(p, 2)
	rh.replicaFetch(3, "poll", 0, 0, -1, 0) // 3 holds the high watermark at 0
	done := make(chan *kmsg.FetchResponseTopicPartition, 1)
	go func() { done <- rh.replicaFetch(2, "poll", 0, 2, 0, 10*time.Second) }()
	waitParked := func(what string) {
		t.Helper()
		select {
		case sp := <-done:
			t.Fatalf("%s answered the parked follower fetch: %+v", what, sp)
		case <-time.After(200 * time.Millisecond):
		}
	}
	waitParked("nothing")
	rh.replicaFetch(3, "poll", 0, 2, 0, 0) // the high watermark moves to 2
	if hw := p.Offsets().HighWatermark; hw != 2 {
		t.Fatalf("high watermark %d, want 2", hw)
	}
	waitParked("a high watermark move")
	rh.produceRecords(p, 1)
	select {
	case sp := <-done:
		if first, next, _ := batchOffsets(sp.RecordBatches); sp.ErrorCode != 0 || first != 2 || next != 3 || sp.HighWatermark != 2 {
			t.Fatalf("the parked fetch: error %d, batches [%d, %d), high watermark %d; want [2, 3) and 2", sp.ErrorCode, first, next, sp.HighWatermark)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an append did not answer the parked follower fetch")
	}
}

// TestListOffsetsByReplicaID: a follower's latest is the log end, a
// consumer's the high watermark; only a debugging tool (-2) may ask a
// follower, which a consumer is refused.
func TestListOffsetsByReplicaID(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("offsets", nil, []int32{1, 2, 3}, []int32{2, 1})
	rh.produceRecords(rh.partition("offsets", 0), 3)
	list := func(replicaID, idx int32) kmsg.ListOffsetsResponseTopicPartition {
		t.Helper()
		r := kmsg.NewPtrListOffsetsRequest()
		r.ReplicaID = replicaID
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "offsets"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = idx, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		resp := rh.handle(2, 7, r, "User:ANONYMOUS").(*kmsg.ListOffsetsResponse)
		return resp.Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		name      string
		replicaID int32
		idx       int32
		code      int16
		offset    int64
	}{
		{"consumer, led here", -1, 0, 0, 0},
		{"follower, led here", 2, 0, 0, 3},
		{"debugging, led here", -2, 0, 0, 3},
		{"consumer, followed here", -1, 1, kerr.NotLeaderForPartition.Code, -1},
		{"follower, followed here", 2, 1, kerr.NotLeaderForPartition.Code, -1},
		{"debugging, followed here", -2, 1, 0, 0},
	} {
		if got := list(tc.replicaID, tc.idx); got.ErrorCode != tc.code || got.Offset != tc.offset {
			t.Errorf("%s: error %d, offset %d; want %d, %d", tc.name, got.ErrorCode, got.Offset, tc.code, tc.offset)
		}
	}
}

// produceAll is an acks=all Produce of one batch to topic's partition 0.
func produceAll(rh *replicaHarness, topic string, timeout time.Duration) kmsg.ProduceResponseTopicPartition {
	r := kmsg.NewPtrProduceRequest()
	r.Acks, r.TimeoutMillis = -1, int32(timeout.Milliseconds())
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = oneRecordBatch("acked")
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	resp := rh.handle(0, 9, r, "User:ANONYMOUS").(*kmsg.ProduceResponse)
	return resp.Topics[0].Partitions[0]
}

// TestAcksAllWaitsForTheISR: an acks=all produce to a partition with
// followers in its ISR is answered once their fetches move the high
// watermark past the batch, not before.
func TestAcksAllWaitsForTheISR(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("acks", nil, []int32{1, 2, 3})
	rh.produceRecords(rh.partition("acks", 0), 2)
	done := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { done <- produceAll(rh, "acks", 10*time.Second) }()
	p := rh.partition("acks", 0)
	for p.Offsets().LogEnd != 3 {
		time.Sleep(time.Millisecond)
	}
	for _, step := range []struct {
		id     int32
		offset int64
	}{{2, 3}, {3, 2}} {
		rh.replicaFetch(step.id, "acks", 0, step.offset, 0, 0)
		select {
		case sp := <-done:
			t.Fatalf("answered after %d fetched at %d, before the high watermark passed the batch: %+v", step.id, step.offset, sp)
		case <-time.After(100 * time.Millisecond):
		}
	}
	rh.replicaFetch(3, "acks", 0, 3, 0, 0)
	select {
	case sp := <-done:
		if sp.ErrorCode != 0 || sp.BaseOffset != 2 {
			t.Fatalf("acks=all answer: error %d, base offset %d; want 0 and 2", sp.ErrorCode, sp.BaseOffset)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the high watermark passed the batch but the produce was not answered")
	}
	// One that the ISR never fetches times out.
	if sp := produceAll(rh, "acks", 100*time.Millisecond); sp.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("acks=all nobody replicates: error %d, want REQUEST_TIMED_OUT", sp.ErrorCode)
	}
}

// TestAcksAllBelowMinInsyncReplicas: an acks=all batch whose ISR shrinks
// below min.insync.replicas while it waits is answered
// NOT_ENOUGH_REPLICAS_AFTER_APPEND; the next one is refused before it is
// appended (NOT_ENOUGH_REPLICAS).
func TestAcksAllBelowMinInsyncReplicas(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("minisr", map[string]string{"min.insync.replicas": "2"}, []int32{1, 2, 3})
	done := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { done <- produceAll(rh, "minisr", 10*time.Second) }()
	p := rh.partition("minisr", 0)
	for p.Offsets().LogEnd != 1 {
		time.Sleep(time.Millisecond)
	}
	rh.fence(2)
	rh.fence(3)
	select {
	case sp := <-done:
		if sp.ErrorCode != kerr.NotEnoughReplicasAfterAppend.Code {
			t.Fatalf("acks=all with the ISR shrunk to the leader: error %d, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", sp.ErrorCode)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the ISR shrank below min.insync.replicas but the produce was not answered")
	}
	if sp := produceAll(rh, "minisr", time.Second); sp.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all with an ISR of one and min.insync.replicas=2: error %d, want NOT_ENOUGH_REPLICAS", sp.ErrorCode)
	}
}

// TestProduceToAFollowerIsNotLeader: a produce to a partition this node
// follows is NOT_LEADER_OR_FOLLOWER, which sends the client to its leader.
func TestProduceToAFollowerIsNotLeader(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("followed", nil, []int32{2, 1})
	if sp := produceAll(rh, "followed", time.Second); sp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to a followed partition: error %d, want NOT_LEADER_OR_FOLLOWER", sp.ErrorCode)
	}
}

// TestNewLeaderWithALaggingHighWatermark: a follower made leader keeps the
// high watermark it had, which may lag the records it holds; until its
// followers bring it to the start of its epoch, a consumer's latest offset
// is OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before ListOffsets v5), as
// Kafka answers, while a follower hears the log end.
func TestNewLeaderWithALaggingHighWatermark(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("lag", nil, []int32{1, 2, 3})
	rh.produceRecords(rh.partition("lag", 0), 4) // not committed: 2 and 3 never fetch them
	rh.fence(1)                                  // 2 leads; this node follows, keeping its 4 records
	if err := rh.meta.UnfenceBroker(t.Context(), 1, rh.epochs[1]); err != nil {
		t.Fatal(err)
	}
	pa := rh.meta.Image().Topics["lag"].Partitions[0]
	if _, err := rh.meta.AlterPartition(t.Context(), metadata.ISRChange{TopicID: rh.meta.Image().Topics["lag"].ID,
		Leader: 2, BrokerEpoch: rh.epochs[2], LeaderEpoch: pa.LeaderEpoch, PartitionEpoch: pa.PartitionEpoch, ISR: []int32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	rh.fence(2) // this node leads again, with 3 in its ISR
	p := rh.partition("lag", 0)
	if off := p.Offsets(); !p.IsLeader() || off.HighWatermark != 0 || off.LogEnd != 4 {
		t.Fatalf("the new leader: leader %v, offsets %+v; want the leader at high watermark 0, log end 4", p.IsLeader(), off)
	}
	latest := func(replicaID int32, version int16) kmsg.ListOffsetsResponseTopicPartition {
		t.Helper()
		r := kmsg.NewPtrListOffsetsRequest()
		r.ReplicaID = replicaID
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "lag"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return rh.handle(2, version, r, "User:ANONYMOUS").(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	if got := latest(-1, 7); got.ErrorCode != kerr.OffsetNotAvailable.Code {
		t.Fatalf("a consumer's latest from a lagging leader: error %d, want OFFSET_NOT_AVAILABLE", got.ErrorCode)
	}
	if got := latest(-1, 4); got.ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("a v4 consumer's latest from a lagging leader: error %d, want LEADER_NOT_AVAILABLE", got.ErrorCode)
	}
	if got := latest(3, 7); got.ErrorCode != 0 || got.Offset != 4 {
		t.Fatalf("a follower's latest: error %d, offset %d; want the log end, 4", got.ErrorCode, got.Offset)
	}
	sp := rh.replicaFetch(3, "lag", 0, 4, 0, 0)
	if sp.ErrorCode != 0 || sp.HighWatermark != 4 {
		t.Fatalf("follower 3 at the log end: error %d, high watermark %d; want 4", sp.ErrorCode, sp.HighWatermark)
	}
	if got := latest(-1, 7); got.ErrorCode != 0 || got.Offset != 4 {
		t.Fatalf("a consumer's latest once committed: error %d, offset %d; want 4", got.ErrorCode, got.Offset)
	}
}
