package sharestate

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The metadata of the tests: topicA has two partitions, topicB one, and
// topicGone is not (or no longer) a topic.
var (
	topicA    = [16]byte{0xa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	topicB    = [16]byte{0xb, 0xfb, 0xff}
	topicGone = [16]byte{0xde, 0xad}
)

func testPartitionCount(id [16]byte) (int32, bool) {
	switch id {
	case topicA:
		return 2, true
	case topicB:
		return 1, true
	}
	return 0, false
}

// harness drives a Coordinator as the runtime does, with a manual clock:
// it keeps every record, checks that each request gets exactly one reply
// from the Handle that received it, and that the reply encodes.
type harness struct {
	tb      tb
	opts    Options
	c       *Coordinator
	now     time.Time
	token   uint64
	records []runtime.Record
}

func newHarness(tb tb) *harness {
	h := &harness{tb: tb, now: t0, opts: Options{PartitionCount: testPartitionCount}}
	h.c = New(h.opts)
	h.absorb(h.c.Tick(h.now))
	return h
}

// absorb collects a tick's Result: records (the state of deleted topics'
// share-partitions), never replies.
func (h *harness) absorb(res runtime.Result) {
	h.tb.Helper()
	if len(res.Replies) != 0 {
		h.tb.Fatalf("a tick replied to %d ops", len(res.Replies))
	}
	h.records = append(h.records, res.Records...)
}

// do runs one request and returns its response.
func (h *harness) do(req kmsg.Request) kmsg.Response {
	h.tb.Helper()
	h.token++
	res := h.c.Handle(runtime.Op{Token: h.token, Req: req, ClientID: "broker"}, h.now)
	if len(res.Replies) != 1 || res.Replies[0].Token != h.token || res.Replies[0].Err != nil || res.Replies[0].Resp == nil {
		h.tb.Fatalf("request %T got replies %+v", req, res.Replies)
	}
	if res.Txn != nil || len(res.Markers) != 0 || len(res.Effects) != 0 {
		h.tb.Fatalf("the share coordinator wrote a transaction, markers or effects: %+v", res)
	}
	for _, r := range res.Records {
		if keyType, _, err := readKey(r.Key); err != nil || keyType != snapshotKeyType {
			h.tb.Fatalf("record key %x: type %d, %v", r.Key, keyType, err)
		}
	}
	h.records = append(h.records, res.Records...)
	resp := res.Replies[0].Resp
	checkEncodes(h.tb, resp)
	return resp
}

// checkEncodes asserts that a response survives its own wire encoding.
func checkEncodes(tb tb, resp kmsg.Response) {
	tb.Helper()
	back := resp.RequestKind().ResponseKind()
	back.SetVersion(resp.GetVersion())
	if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
		tb.Fatalf("%T v%d does not decode: %v", resp, resp.GetVersion(), err)
	}
}

// reload replaces the coordinator with one replayed from every record.
func (h *harness) reload() {
	h.tb.Helper()
	h.c = replayAll(h.tb, h.opts, h.records)
	h.absorb(h.c.Tick(h.now))
}

func replayAll(tb tb, opts Options, records []runtime.Record) *Coordinator {
	tb.Helper()
	c := New(opts)
	for i, r := range records {
		if err := c.Replay(r.Key, r.Value); err != nil {
			tb.Fatalf("replay of record %d: %v", i, err)
		}
	}
	return c
}

// Requests, one partition each.

func initReq(group string, topic [16]byte, partition, stateEpoch int32, start int64) *kmsg.InitializeShareGroupStateRequest {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = group
	p := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.StartOffset = partition, stateEpoch, start
	req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{{TopicID: topic, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{p}}}
	return req
}

// writeArgs is one partition of a WriteShareGroupState request.
type writeArgs struct {
	version                 int16
	group                   string
	topic                   [16]byte
	partition               int32
	stateEpoch, leaderEpoch int32
	start                   int64
	deliveryComplete        int32
	batches                 []stateBatch
}

func writeReq(w writeArgs) *kmsg.WriteShareGroupStateRequest {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.Version, req.GroupID = w.version, w.group
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset = w.partition, w.stateEpoch, w.leaderEpoch, w.start
	p.DeliveryCompleteCount = w.deliveryComplete
	for _, b := range w.batches {
		wb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
		wb.FirstOffset, wb.LastOffset, wb.DeliveryState, wb.DeliveryCount = b.firstOffset(), b.lastOffset(), int8(b.State), b.Deliveries
		p.StateBatches = append(p.StateBatches, wb)
	}
	req.Topics = []kmsg.WriteShareGroupStateRequestTopic{{TopicID: w.topic, Partitions: []kmsg.WriteShareGroupStateRequestTopicPartition{p}}}
	return req
}

func readReq(group string, topic [16]byte, partition, leaderEpoch int32) *kmsg.ReadShareGroupStateRequest {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = group
	p := kmsg.NewReadShareGroupStateRequestTopicPartition()
	p.Partition, p.LeaderEpoch = partition, leaderEpoch
	req.Topics = []kmsg.ReadShareGroupStateRequestTopic{{TopicID: topic, Partitions: []kmsg.ReadShareGroupStateRequestTopicPartition{p}}}
	return req
}

func summaryReq(version int16, group string, topic [16]byte, partition int32) *kmsg.ReadShareGroupStateSummaryRequest {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.Version, req.GroupID = version, group
	p := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	p.Partition = partition
	req.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: topic, Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{p}}}
	return req
}

func deleteReq(group string, topic [16]byte, partition int32) *kmsg.DeleteShareGroupStateRequest {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = group
	p := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
	p.Partition = partition
	req.Topics = []kmsg.DeleteShareGroupStateRequestTopic{{TopicID: topic, Partitions: []kmsg.DeleteShareGroupStateRequestTopicPartition{p}}}
	return req
}

// Answers of one-partition requests.

func (h *harness) initialize(group string, topic [16]byte, partition, stateEpoch int32, start int64) int16 {
	h.tb.Helper()
	resp := h.do(initReq(group, topic, partition, stateEpoch, start)).(*kmsg.InitializeShareGroupStateResponse)
	return onlyPartition(h.tb, resp.Topics, func(t kmsg.InitializeShareGroupStateResponseTopic) []kmsg.InitializeShareGroupStateResponseTopicPartition {
		return t.Partitions
	}).ErrorCode
}

func (h *harness) write(w writeArgs) int16 {
	h.tb.Helper()
	resp := h.do(writeReq(w)).(*kmsg.WriteShareGroupStateResponse)
	return onlyPartition(h.tb, resp.Topics, func(t kmsg.WriteShareGroupStateResponseTopic) []kmsg.WriteShareGroupStateResponseTopicPartition {
		return t.Partitions
	}).ErrorCode
}

func (h *harness) deleteState(group string, topic [16]byte, partition int32) int16 {
	h.tb.Helper()
	resp := h.do(deleteReq(group, topic, partition)).(*kmsg.DeleteShareGroupStateResponse)
	return onlyPartition(h.tb, resp.Topics, func(t kmsg.DeleteShareGroupStateResponseTopic) []kmsg.DeleteShareGroupStateResponseTopicPartition {
		return t.Partitions
	}).ErrorCode
}

func (h *harness) read(group string, topic [16]byte, partition, leaderEpoch int32) kmsg.ReadShareGroupStateResponseTopicPartition {
	h.tb.Helper()
	resp := h.do(readReq(group, topic, partition, leaderEpoch)).(*kmsg.ReadShareGroupStateResponse)
	return onlyPartition(h.tb, resp.Topics, func(t kmsg.ReadShareGroupStateResponseTopic) []kmsg.ReadShareGroupStateResponseTopicPartition {
		return t.Partitions
	})
}

func (h *harness) summary(version int16, group string, topic [16]byte, partition int32) kmsg.ReadShareGroupStateSummaryResponseTopicPartition {
	h.tb.Helper()
	resp := h.do(summaryReq(version, group, topic, partition)).(*kmsg.ReadShareGroupStateSummaryResponse)
	return onlyPartition(h.tb, resp.Topics, func(t kmsg.ReadShareGroupStateSummaryResponseTopic) []kmsg.ReadShareGroupStateSummaryResponseTopicPartition {
		return t.Partitions
	})
}

// onlyPartition returns the one partition of a response to a one-partition
// request.
func onlyPartition[T, P any](tb tb, topics []T, partitions func(T) []P) P {
	tb.Helper()
	if len(topics) != 1 || len(partitions(topics[0])) != 1 {
		tb.Fatalf("a one-partition request answered %+v", topics)
	}
	return partitions(topics[0])[0]
}

func wantCode(tb tb, what string, got int16, want *kerr.Error) {
	tb.Helper()
	w := int16(0)
	if want != nil {
		w = want.Code
	}
	if got != w {
		tb.Fatalf("%s: error code %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// snapshotOf is what a reload must reproduce: each key's persisted value
// (as its record bytes, with canonical batches) and its fences.
func snapshotOf(c *Coordinator) map[string]string {
	out := map[string]string{}
	for k, s := range c.states {
		out[k.String()] = fmt.Sprintf("%s fence leader %d state %d", hex.EncodeToString(s.appendTo(nil)), s.fenceLeaderEpoch, s.fenceStateEpoch)
	}
	return out
}

// checkInvariants asserts the invariants of doc.go.
func checkInvariants(tb tb, c *Coordinator) {
	tb.Helper()
	for k, s := range c.states {
		if checkKey(k) != nil {
			tb.Fatalf("state under key %q", k)
		}
		checkCanonical(tb, s.batches, s.start)
		if s.fenceLeaderEpoch < s.leaderEpoch || s.fenceStateEpoch < s.stateEpoch {
			tb.Fatalf("%s: fences (%d, %d) below the epochs (%d, %d)", k, s.fenceLeaderEpoch, s.fenceStateEpoch, s.leaderEpoch, s.stateEpoch)
		}
		if s.deliveryComplete.ok && s.deliveryComplete.v < 0 {
			tb.Fatalf("%s: delivery complete count %d", k, s.deliveryComplete.v)
		}
	}
}
