package api

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/config"
)

// consumerFetch is a consumer's fetch of partition 0 of topic at offset,
// naming rack.
func (rh *replicaHarness) consumerFetch(version int16, topic string, offset int64, rack string) *kmsg.FetchResponseTopicPartition {
	rh.t.Helper()
	r := kmsg.NewPtrFetchRequest()
	r.MaxBytes, r.Rack = 1<<20, rack
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, rh.meta.Image().Topics[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	return onlyPartition(rh.t, rh.handle(1, version, r, "User:ANONYMOUS").(*kmsg.FetchResponse))
}

// A follower serves a consumer's Fetch v11+ (KIP-392) up to the high
// watermark its leader gave it: what lies between that and its log end
// reads nothing, an offset past its log end is out of range. Fetch v10
// carries no client metadata and is the leader's alone.
func TestFollowerServesConsumerFetch(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("followed", nil, []int32{3, 1})
	p := rh.partition("followed", 0)
	if _, err := p.AppendAsFollower(oneRecordBatch("one")); err != nil {
		t.Fatal(err)
	}
	if got := rh.consumerFetch(10, "followed", 0, ""); got.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("Fetch v10 from a follower: code %d, want NOT_LEADER_OR_FOLLOWER", got.ErrorCode)
	}
	got := rh.consumerFetch(11, "followed", 0, "")
	if got.ErrorCode != 0 || len(got.RecordBatches) != 0 || got.HighWatermark != 0 {
		t.Fatalf("before the leader's high watermark came: code %d, %d bytes, high watermark %d; want nothing to read",
			got.ErrorCode, len(got.RecordBatches), got.HighWatermark)
	}
	if _, err := p.SetHighWatermarkFromLeader(1); err != nil {
		t.Fatal(err)
	}
	got = rh.consumerFetch(16, "followed", 0, "")
	if first, next, n := batchOffsets(got.RecordBatches); got.ErrorCode != 0 || n != 1 || first != 0 || next != 1 || got.HighWatermark != 1 {
		t.Fatalf("after it: code %d, batches %d [%d, %d), high watermark %d; want the record at 0", got.ErrorCode, n, first, next, got.HighWatermark)
	}
	if got = rh.consumerFetch(16, "followed", 5, ""); got.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("past the follower's log end: code %d, want OFFSET_OUT_OF_RANGE", got.ErrorCode)
	}
}

// A follower that restarted serves a consumer nothing until its leader
// confirms its high watermark: the one it took at restart may count
// records that never committed, which the new leader may truncate.
func TestRestartedFollowerWaitsForItsLeader(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("followed", nil, []int32{3, 1})
	p := rh.partition("followed", 0)
	if _, err := p.AppendAsFollower(oneRecordBatch("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetHighWatermarkFromLeader(1); err != nil {
		t.Fatal(err)
	}
	rh.restartBroker()
	p = rh.partition("followed", 0)
	if off := p.Offsets(); !off.RestartHW {
		t.Fatalf("after the restart offsets %+v: want the high watermark marked as taken at restart", off)
	}
	if got := rh.consumerFetch(16, "followed", 0, ""); got.ErrorCode != 0 || len(got.RecordBatches) != 0 {
		t.Fatalf("before the leader answered: code %d, %d bytes; want nothing to read", got.ErrorCode, len(got.RecordBatches))
	}
	if _, err := p.SetHighWatermarkFromLeader(1); err != nil {
		t.Fatal(err)
	}
	if got := rh.consumerFetch(16, "followed", 0, ""); got.ErrorCode != 0 || len(got.RecordBatches) == 0 {
		t.Fatalf("after the leader confirmed: code %d, %d bytes; want the records", got.ErrorCode, len(got.RecordBatches))
	}
}

// With the rack-aware selector, a leader sends a consumer of another rack
// to the in-sync follower of its rack that holds the fetch offset, with
// no records; otherwise it serves the fetch itself.
func TestLeaderSendsConsumerToItsRack(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{"replica.selector.class": config.RackAwareReplicaSelector})
	rh.createTopic("racked", nil, []int32{1, 2, 3})
	p := rh.partition("racked", 0)
	rh.produceRecords(p, 3)
	rh.replicaFetch(2, "racked", 0, 3, 0, 0) // 2 has all three; 3 has not fetched

	got := rh.consumerFetch(11, "racked", 1, "rack-2")
	if got.ErrorCode != 0 || got.PreferredReadReplica != 2 || len(got.RecordBatches) != 0 {
		t.Fatalf("a rack-2 consumer: code %d, preferred %d, %d bytes; want replica 2 and no records",
			got.ErrorCode, got.PreferredReadReplica, len(got.RecordBatches))
	}
	for _, tc := range []struct {
		why  string
		rack string
		at   int64
	}{
		{"no rack", "", 1},
		{"the leader's rack", "rack-1", 1},
		{"a follower that has not fetched", "rack-3", 1},
		{"past what the follower has", "rack-2", 4},
	} {
		got := rh.consumerFetch(11, "racked", tc.at, tc.rack)
		if got.PreferredReadReplica != -1 {
			t.Fatalf("%s: sent to replica %d; want the leader to serve it", tc.why, got.PreferredReadReplica)
		}
	}
	if got := rh.consumerFetch(10, "racked", 1, "rack-2"); got.PreferredReadReplica != -1 {
		t.Fatalf("Fetch v10: preferred %d; it has no rack and no preferred replica", got.PreferredReadReplica)
	}
}

// Without replica.selector.class the leader serves every consumer.
func TestLeaderWithoutSelectorServesEveryRack(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("unracked", nil, []int32{1, 2, 3})
	p := rh.partition("unracked", 0)
	rh.produceRecords(p, 3)
	rh.replicaFetch(2, "unracked", 0, 3, 0, 0)
	if got := rh.consumerFetch(16, "unracked", 1, "rack-2"); got.PreferredReadReplica != -1 {
		t.Fatalf("sent to replica %d without a selector", got.PreferredReadReplica)
	}
}

// A follower that says which high watermark it has (Fetch v18, KIP-1166)
// is answered as soon as the leader's is past it: at once when its own
// fetch moves it, and from its long poll when another follower's does.
func TestReplicaFetchAnsweredWhenHighWatermarkPassesFollowers(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("hw", nil, []int32{1, 2, 3})
	p := rh.partition("hw", 0)
	rh.produceRecords(p, 3)
	rh.replicaFetch(3, "hw", 0, 3, 0, 0)
	fetchV18 := func(id int32, offset, knownHW int64) <-chan *kmsg.FetchResponseTopicPartition {
		r := rh.replicaFetchRequest(id, "hw", 0, offset, 0, time.Minute)
		r.Topics[0].Partitions[0].HighWatermark = knownHW
		out := make(chan *kmsg.FetchResponseTopicPartition, 1)
		go func() {
			resp := rh.h.Handle(t.Context(), &Request{Key: 1, Version: 18, Body: r, Principal: "User:ANONYMOUS"})
			got := resp.Resp
			if resp.Wait != nil {
				got = resp.Wait()
			}
			if resp.Release != nil {
				defer resp.Release()
			}
			out <- &got.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		}()
		return out
	}
	answer := func(what string, ch <-chan *kmsg.FetchResponseTopicPartition) *kmsg.FetchResponseTopicPartition {
		t.Helper()
		select {
		case got := <-ch:
			return got
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still parked after 20s of a one-minute long poll", what)
			return nil
		}
	}
	// Follower 2's fetch at the log end moves the high watermark to 3,
	// past the 0 it has: answered at once.
	if got := answer("the fetch that moves the high watermark", fetchV18(2, 3, 0)); got.HighWatermark != 3 {
		t.Fatalf("high watermark %d, want 3", got.HighWatermark)
	}
	// Three more; follower 2 has them and high watermark 3, which stays
	// 3 until follower 3 has them too: it parks, and follower 3's fetch
	// answers it.
	rh.produceRecords(p, 3)
	parked := fetchV18(2, 6, 3)
	select {
	case got := <-parked:
		t.Fatalf("answered with high watermark %d before it moved", got.HighWatermark)
	case <-time.After(200 * time.Millisecond):
	}
	rh.replicaFetch(3, "hw", 0, 6, 0, 0)
	if got := answer("the parked fetch", parked); got.HighWatermark != 6 {
		t.Fatalf("high watermark %d, want 6", got.HighWatermark)
	}
}

// A follower's parked fetch is answered for the high watermark alone only
// when the leader's would raise the follower's, which is at most the
// follower's log end (its fetch offset).
func TestHighWatermarkNews(t *testing.T) {
	for _, tc := range []struct {
		leader        int64
		offset, known int64
		want          bool
	}{
		{leader: 10, offset: 10, known: hwNotSent, want: false}, // did not say
		{leader: 10, offset: 10, known: 5, want: true},
		{leader: 10, offset: 8, known: 5, want: true},   // raised to its log end
		{leader: 10, offset: 6, known: 6, want: false},  // behind: records answer it
		{leader: 5, offset: 10, known: 5, want: false},  // nothing newer
		{leader: 10, offset: 10, known: -1, want: true}, // unknown
	} {
		tgt := replicaTarget{fetchTarget: fetchTarget{offset: base.Offset(tc.offset)}, knownHW: tc.known}
		if got := hwNews(base.Offset(tc.leader), tgt); got != tc.want {
			t.Errorf("leader %d, follower at %d knowing %d: %v, want %v", tc.leader, tc.offset, tc.known, got, tc.want)
		}
	}
}
