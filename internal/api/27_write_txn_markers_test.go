package api

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

func TestWriteTxnMarkersRegistered(t *testing.T) {
	checkAdvertised(t, 27, 0, 1) // v2 is KIP-890's
}

// TestEveryRegisteredVersionDecodes: a request of every registered key and
// version, encoded by kmsg, decodes as the server decodes it, and so does
// its response: registering a version kmsg cannot read is a bug.
func TestEveryRegisteredVersionDecodes(t *testing.T) {
	for _, reg := range registrations() {
		for v := reg.min; v <= reg.max; v++ {
			req := kmsg.RequestForKey(reg.key)
			req.SetVersion(v)
			got := kmsg.RequestForKey(reg.key)
			got.SetVersion(v)
			if err := got.ReadFrom(req.AppendTo(nil)); err != nil {
				t.Errorf("request key %d v%d does not decode: %v", reg.key, v, err)
			}
			resp := req.ResponseKind()
			back := kmsg.ResponseForKey(reg.key)
			back.SetVersion(v)
			if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
				t.Errorf("response key %d v%d does not decode: %v", reg.key, v, err)
			}
		}
	}
}

// markerTarget is one partition a WriteTxnMarkers names.
type markerTarget struct {
	topic string
	idx   int32
}

// writeMarkers is a WriteTxnMarkers v1 of one marker to targets, as
// principal; it returns each target's code, in order.
func (rh *replicaHarness) writeMarkers(principal string, pid int64, epoch int16, commit bool, coordinatorEpoch int32, targets ...markerTarget) []int16 {
	rh.t.Helper()
	r := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, coordinatorEpoch
	for _, tg := range targets {
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = tg.topic, []int32{tg.idx}
		m.Topics = append(m.Topics, mt)
	}
	r.Markers = append(r.Markers, m)
	resp := rh.handle(27, 1, r, principal).(*kmsg.WriteTxnMarkersResponse)
	if len(resp.Markers) != 1 || resp.Markers[0].ProducerID != pid || len(resp.Markers[0].Topics) != len(targets) {
		rh.t.Fatalf("WriteTxnMarkers answered %+v for %d partitions", resp.Markers, len(targets))
	}
	codes := make([]int16, len(targets))
	for i, rt := range resp.Markers[0].Topics {
		if rt.Topic != targets[i].topic || len(rt.Partitions) != 1 || rt.Partitions[0].Partition != targets[i].idx {
			rh.t.Fatalf("answer %d is %+v, want %v", i, rt, targets[i])
		}
		codes[i] = rt.Partitions[0].ErrorCode
	}
	return codes
}

// txnBatch is a transactional producer's batch of one record.
func txnBatch(pid int64, epoch int16, seq int32, value string) []byte {
	r := kmsg.Record{Value: []byte(value)}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{Magic: 2, Attributes: 0x10, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: 1,
		FirstTimestamp: now, MaxTimestamp: now, Records: r.AppendTo(nil)}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-record.LogOverhead))
	record.WriteCRC(out)
	return out
}

// openTxn appends a transactional batch of producer pid at epoch to p.
func (rh *replicaHarness) openTxn(p *partition.Partition, pid int64, epoch int16) {
	rh.t.Helper()
	if _, _, err := p.Append(txnBatch(pid, epoch, 0, "in a transaction"), partition.AcksLeader); err != nil {
		rh.t.Fatal(err)
	}
}

// TestWriteTxnMarkersToDataPartitions: a marker to a partition led here
// ends the producer's transaction there (the last stable offset moves to
// the log end); partitions this broker follows, does not host or does not
// know, and markers of an epoch below the producer's, are answered with
// the codes the sender acts on, each partition with its own.
func TestWriteTxnMarkersToDataPartitions(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	// data-0 led here alone, data-1 followed here, data-2 not hosted.
	rh.createTopic("data", nil, []int32{1}, []int32{2, 1}, []int32{2, 3})
	p := rh.partition("data", 0)
	const pid = 42
	rh.openTxn(p, pid, 3)
	if off := p.Offsets(); off.LastStable != 0 || off.LogEnd != 1 {
		t.Fatalf("an open transaction: offsets %+v, want the last stable offset at 0", off)
	}
	codes := rh.writeMarkers("User:ANONYMOUS", pid, 3, true, 2,
		markerTarget{"data", 0}, markerTarget{"data", 1}, markerTarget{"data", 2},
		markerTarget{"data", 9}, markerTarget{"nowhere", 0})
	want := []int16{0, kerr.NotLeaderForPartition.Code, kerr.NotLeaderForPartition.Code,
		kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code}
	for i := range want {
		if codes[i] != want[i] {
			t.Errorf("partition %d of the request: error %d, want %d", i, codes[i], want[i])
		}
	}
	if off := p.Offsets(); off.LogEnd != 2 || off.LastStable != 2 {
		t.Fatalf("after the commit marker: offsets %+v, want log end and last stable offset 2", off)
	}

	for _, tc := range []struct {
		name             string
		epoch            int16
		coordinatorEpoch int32
		want             int16
	}{
		{"a marker of an older producer epoch", 2, 2, kerr.InvalidProducerEpoch.Code},
		{"a marker of an older coordinator epoch", 5, 1, kerr.TransactionCoordinatorFenced.Code},
	} {
		rh.openTxn(p, pid, 5) // a newer epoch: its first batch is at sequence 0
		if got := rh.writeMarkers("User:ANONYMOUS", pid, tc.epoch, false, tc.coordinatorEpoch, markerTarget{"data", 0}); got[0] != tc.want {
			t.Errorf("%s: error %d, want %d", tc.name, got[0], tc.want)
		}
		// The transaction is still open; the current coordinator ends it.
		if got := rh.writeMarkers("User:ANONYMOUS", pid, 5, false, 2, markerTarget{"data", 0}); got[0] != 0 {
			t.Fatalf("%s, then the current marker: error %d", tc.name, got[0])
		}
		if off := p.Offsets(); off.LastStable != off.LogEnd {
			t.Fatalf("%s, then the current abort marker: offsets %+v, want nothing open", tc.name, off)
		}
	}
	for _, bad := range []struct {
		name             string
		pid              int64
		epoch            int16
		coordinatorEpoch int32
	}{{"no producer id", -1, 0, 2}, {"no producer epoch", pid, -1, 2}, {"no coordinator epoch", pid, 5, -1}} {
		if got := rh.writeMarkers("User:ANONYMOUS", bad.pid, bad.epoch, true, bad.coordinatorEpoch, markerTarget{"data", 0}, markerTarget{offsets.TopicName, 0}); got[0] != kerr.InvalidRequest.Code || got[1] != kerr.InvalidRequest.Code {
			t.Errorf("a marker with %s: errors %v, want INVALID_REQUEST", bad.name, got)
		}
	}
}

// TestWriteTxnMarkersWaitsForTheISR: a marker to a partition with a
// follower in its ISR is answered once the follower has it, as an acks=all
// produce.
func TestWriteTxnMarkersWaitsForTheISR(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("replicated", nil, []int32{1, 2})
	p := rh.partition("replicated", 0)
	rh.openTxn(p, 7, 0)
	rh.replicaFetch(2, "replicated", 0, 0, -1, 0)
	rh.replicaFetch(2, "replicated", 0, 1, 0, 0) // the high watermark at 1
	done := make(chan int16, 1)
	go func() { done <- rh.writeMarkers("User:ANONYMOUS", 7, 0, true, 0, markerTarget{"replicated", 0})[0] }()
	for p.Offsets().LogEnd != 2 {
		time.Sleep(time.Millisecond)
	}
	select {
	case code := <-done:
		t.Fatalf("answered %d before the follower had the marker", code)
	case <-time.After(100 * time.Millisecond):
	}
	rh.replicaFetch(2, "replicated", 0, 2, 0, 0)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("a replicated marker: error %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower has the marker but it was not answered")
	}
}

// TestWriteTxnMarkersNeedsClusterAction: with an authorizer, a sender
// without CLUSTER_ACTION on the cluster gets CLUSTER_AUTHORIZATION_FAILED
// for every partition and nothing is written; a super user (a broker) is
// served.
func TestWriteTxnMarkersNeedsClusterAction(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:broker",
	})
	rh.createTopic("guarded", nil, []int32{1}, []int32{1})
	p := rh.partition("guarded", 0)
	rh.openTxn(p, 9, 0)
	for i, code := range rh.writeMarkers("User:mallory", 9, 0, true, 0, markerTarget{"guarded", 0}, markerTarget{"guarded", 1}, markerTarget{"unknown", 0}) {
		if code != kerr.ClusterAuthorizationFailed.Code {
			t.Errorf("partition %d without CLUSTER_ACTION: error %d, want CLUSTER_AUTHORIZATION_FAILED", i, code)
		}
	}
	if end := p.Offsets().LogEnd; end != 1 {
		t.Fatalf("a refused marker was written: log end %d", end)
	}
	if got := rh.writeMarkers("User:broker", 9, 0, true, 0, markerTarget{"guarded", 0}); got[0] != 0 {
		t.Fatalf("a broker's marker: error %d", got[0])
	}
}

// withGroups gives the harness's api a group coordinator on the
// __consumer_offsets partitions led here: partition 0 here alone,
// partition 1 on broker 2.
func (rh *replicaHarness) withGroups() {
	rh.t.Helper()
	rh.createTopic(offsets.TopicName, nil, []int32{1}, []int32{2})
	rt := rh.coordinatorRuntime(offsets.TopicName, func(int32) (runtime.Shard, error) {
		return group.New(group.DefaultOptions(GroupTopics(rh.meta), crand.Reader))
	}, group.ErrorResponse)
	rt.Start(0)
	opts := rh.h.opts
	opts.Groups = rt
	h, err := New(opts)
	if err != nil {
		rh.t.Fatal(err)
	}
	rh.h = h
}

// groupOnPartition is a group id that __consumer_offsets partition idx (of
// two) coordinates.
func groupOnPartition(t *testing.T, idx int32) string {
	t.Helper()
	for i := range 1000 {
		g := "group-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
		if offsets.PartitionFor(g, 2) == idx {
			return g
		}
	}
	t.Fatalf("no group id on partition %d", idx)
	return ""
}

// txnOffsetCommit commits offset of data-0 for group in producer pid's
// transaction, retrying while the coordinator loads.
func (rh *replicaHarness) txnOffsetCommit(groupID string, pid int64, epoch int16, offset int64) {
	rh.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = "txn", groupID, pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "data"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset, rp.LeaderEpoch = offset, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		resp := rh.handle(28, 3, r, "User:ANONYMOUS").(*kmsg.TxnOffsetCommitResponse)
		code := resp.Topics[0].Partitions[0].ErrorCode
		if code == 0 {
			return
		}
		if code != kerr.CoordinatorLoadInProgress.Code || time.Now().After(deadline) {
			rh.t.Fatalf("TxnOffsetCommit: error %d", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// committedOffset is group's committed offset of data-0 (-1: none).
func (rh *replicaHarness) committedOffset(groupID string) int64 {
	rh.t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Group = groupID
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "data", []int32{0}
	r.Topics = append(r.Topics, rt)
	resp := rh.handle(9, 7, r, "User:ANONYMOUS").(*kmsg.OffsetFetchResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		rh.t.Fatalf("OffsetFetch: %+v", resp)
	}
	return resp.Topics[0].Partitions[0].Offset
}

// TestWriteTxnMarkersToGroupPartitions: a marker to a __consumer_offsets
// partition coordinated here settles the producer's pending offsets there
// (a commit makes them visible to OffsetFetch); a stale one is
// INVALID_PRODUCER_EPOCH, which the sender drops; a partition whose
// coordinator is not here is NOT_LEADER_OR_FOLLOWER, which it retries.
func TestWriteTxnMarkersToGroupPartitions(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("data", nil, []int32{1})
	rh.withGroups()
	g := groupOnPartition(t, 0)
	const pid = 11
	rh.txnOffsetCommit(g, pid, 1, 5)
	if got := rh.committedOffset(g); got != -1 {
		t.Fatalf("a pending transactional offset is visible: %d", got)
	}
	codes := rh.writeMarkers("User:ANONYMOUS", pid, 1, true, 0, markerTarget{offsets.TopicName, 0}, markerTarget{offsets.TopicName, 1})
	if codes[0] != 0 || codes[1] != kerr.NotLeaderForPartition.Code {
		t.Fatalf("markers to partitions coordinated here and on broker 2: errors %v, want 0 and NOT_LEADER_OR_FOLLOWER", codes)
	}
	if got := rh.committedOffset(g); got != 5 {
		t.Fatalf("after the commit marker the committed offset is %d, want 5", got)
	}

	rh.txnOffsetCommit(g, pid, 2, 8)
	if got := rh.writeMarkers("User:ANONYMOUS", pid, 1, true, 0, markerTarget{offsets.TopicName, 0}); got[0] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("a marker of an older producer epoch: error %d, want INVALID_PRODUCER_EPOCH", got[0])
	}
	if got := rh.writeMarkers("User:ANONYMOUS", pid, 2, false, 0, markerTarget{offsets.TopicName, 0}); got[0] != 0 {
		t.Fatalf("the abort marker: error %d", got[0])
	}
	if got := rh.committedOffset(g); got != 5 {
		t.Fatalf("after the abort marker the committed offset is %d, want 5 still", got)
	}
}

func TestGroupMarkerCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int16
	}{
		{"written", nil, 0},
		{"stale", group.ErrStaleMarker, kerr.InvalidProducerEpoch.Code},
		{"fenced coordinator", group.ErrFencedCoordinator, kerr.TransactionCoordinatorFenced.Code},
		{"not the coordinator", &runtime.CodeError{Code: kerr.NotCoordinator.Code}, kerr.NotLeaderForPartition.Code},
		{"loading", &runtime.CodeError{Code: kerr.CoordinatorLoadInProgress.Code}, kerr.NotLeaderForPartition.Code},
		{"not available", &runtime.CodeError{Code: kerr.CoordinatorNotAvailable.Code}, kerr.NotLeaderForPartition.Code},
		{"failed append", &runtime.CodeError{Code: kerr.KafkaStorageError.Code}, kerr.KafkaStorageError.Code},
		{"replication timeout", partition.ErrReplicationTimeout, kerr.RequestTimedOut.Code},
		{"closed", context.Canceled, kerr.KafkaStorageError.Code},
	} {
		if got := groupMarkerCode(tc.err); got != tc.want {
			t.Errorf("%s: code %d, want %d", tc.name, got, tc.want)
		}
	}
}
