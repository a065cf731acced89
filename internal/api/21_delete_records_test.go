package api

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDeleteRecordsAnswers: each partition of a DeleteRecords is answered
// on its own, at once when it has no follower: the new log start as its
// low watermark (-1 is the high watermark), or an error with low watermark
// -1 (an unknown topic or partition, an offset past the high watermark),
// as Kafka answers them.
func TestDeleteRecordsAnswers(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("a", nil, []int32{1})
	rh.createTopic("b", nil, []int32{1})
	rh.produceRecords(rh.partition("a", 0), 3)
	rh.produceRecords(rh.partition("b", 0), 5)
	hwA, hwB := rh.partition("a", 0).Offsets().HighWatermark, rh.partition("b", 0).Offsets().HighWatermark
	if hwA != 3 || hwB != 5 {
		t.Fatalf("high watermarks %d and %d, want 3 and 5", hwA, hwB)
	}
	r := kmsg.NewPtrDeleteRecordsRequest()
	r.TimeoutMillis = 10_000
	for _, ask := range []struct {
		topic   string
		parts   []int32
		offsets []int64
	}{
		{"a", []int32{0, 7}, []int64{-1, 1}},
		{"missing", []int32{0}, []int64{1}},
		{"b", []int32{0}, []int64{2}},
	} {
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = ask.topic
		for i, p := range ask.parts {
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Partition, rp.Offset = p, ask.offsets[i]
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = append(r.Topics, rt)
	}
	type answer struct {
		code int16
		low  int64
	}
	var got []answer
	for _, st := range rh.handle(21, 2, r, "User:ANONYMOUS").(*kmsg.DeleteRecordsResponse).Topics {
		for _, sp := range st.Partitions {
			got = append(got, answer{sp.ErrorCode, sp.LowWatermark})
		}
	}
	unknown := kerr.UnknownTopicOrPartition.Code
	if want := []answer{{0, 3}, {unknown, -1}, {unknown, -1}, {0, 2}}; !slices.Equal(got, want) {
		t.Fatalf("answers %v, want %v", got, want)
	}
	if start := rh.partition("a", 0).Offsets().LogStart; start != 3 {
		t.Fatalf("topic a starts at %d, want 3 (its high watermark)", start)
	}

	past := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "b"
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 6
	rt.Partitions = append(rt.Partitions, rp)
	past.Topics = append(past.Topics, rt)
	sp := rh.handle(21, 2, past, "User:ANONYMOUS").(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.OffsetOutOfRange.Code || sp.LowWatermark != -1 {
		t.Fatalf("past the high watermark: %d, low watermark %d; want OFFSET_OUT_OF_RANGE, -1", sp.ErrorCode, sp.LowWatermark)
	}
	if start := rh.partition("b", 0).Offsets().LogStart; start != 2 {
		t.Fatalf("topic b starts at %d after a refused delete, want 2", start)
	}
	reply := rh.h.Handle(t.Context(), &Request{Key: 21, Version: 2, Body: r, Principal: "User:ANONYMOUS"})
	if reply.Wait != nil {
		t.Fatal("a DeleteRecords of partitions without followers waits")
	}
}

// TestDeleteRecordsWaitsForTheFollowers: a partition with a follower is
// answered once the follower's log start (from its fetches) reaches the
// new start, with that low watermark; one whose follower does not get
// there by the request's timeout is REQUEST_TIMED_OUT.
func TestDeleteRecordsWaitsForTheFollowers(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("w", nil, []int32{1, 2})
	rh.produceRecords(rh.partition("w", 0), 4)
	follow := func(logStart int64) {
		t.Helper()
		r := rh.replicaFetchRequest(2, "w", 0, 4, -1, 0)
		r.Topics[0].Partitions[0].LogStartOffset = logStart
		if p := onlyPartition(t, rh.handle(1, 15, r, "User:ANONYMOUS").(*kmsg.FetchResponse)); p.ErrorCode != 0 {
			t.Fatalf("follower fetch: %d", p.ErrorCode)
		}
	}
	follow(0)
	if hw := rh.partition("w", 0).Offsets().HighWatermark; hw != 4 {
		t.Fatalf("high watermark %d with the follower caught up, want 4", hw)
	}
	deleteBefore := func(offset int64, timeout time.Duration) Reply {
		r := kmsg.NewPtrDeleteRecordsRequest()
		r.TimeoutMillis = int32(timeout.Milliseconds())
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = "w"
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Offset = offset
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		r.SetVersion(2)
		return rh.h.Handle(t.Context(), &Request{Key: 21, Version: 2, Body: r, Principal: "User:ANONYMOUS"})
	}
	answer := func(reply Reply) kmsg.DeleteRecordsResponseTopicPartition {
		t.Helper()
		if reply.Wait == nil {
			t.Fatal("a DeleteRecords of a partition whose follower is behind answered at once")
		}
		return reply.Wait().(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	}

	reply := deleteBefore(2, 10*time.Second)
	follow(2)
	if p := answer(reply); p.ErrorCode != 0 || p.LowWatermark != 2 {
		t.Fatalf("with the follower at 2: %d, low watermark %d; want 0, 2", p.ErrorCode, p.LowWatermark)
	}
	if p := answer(deleteBefore(3, 100*time.Millisecond)); p.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("with the follower left at 2: %d, want REQUEST_TIMED_OUT", p.ErrorCode)
	}
}
