package sharestate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

const group = "g"

func TestKeyIsKafkasCoordinatorKey(t *testing.T) {
	// Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, no padding.
	if got, want := Key("grp", topicA, 1), "grp:CgECAwQFBgcICQoLDA0ODw:1"; got != want {
		t.Fatalf("Key = %q, want %q", got, want)
	}
	if got, want := Key("g:x", topicB, 0), "g:x:C_v_AAAAAAAAAAAAAAAAAA:0"; got != want {
		t.Fatalf("Key = %q, want %q", got, want)
	}
}

func TestMaxVersionsAreKmsgs(t *testing.T) {
	for key, max := range MaxVersions {
		req := kmsg.RequestForKey(key)
		if req == nil || max > req.MaxVersion() {
			t.Fatalf("API %d: MaxVersions %d, kmsg %v", key, max, req)
		}
		req.SetVersion(max)
		ErrorResponse(req, kerr.NotCoordinator.Code) // every served request has one
	}
}

func TestInitialize(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 3, -1), nil)
	if len(h.records) != 1 {
		t.Fatalf("initialize wrote %d records", len(h.records))
	}
	r := h.read(group, topicA, 0, 0)
	wantCode(t, "read", r.ErrorCode, nil)
	if r.StateEpoch != 3 || r.StartOffset != -1 || len(r.StateBatches) != 0 || r.StateBatches == nil {
		t.Fatalf("read after initialize: %+v", r)
	}
	s := h.summary(1, group, topicA, 0)
	if s.StateEpoch != 3 || s.LeaderEpoch != 0 || s.StartOffset != -1 || s.DeliveryCompleteCount != -1 {
		t.Fatalf("summary of an initialized share-partition without start: %+v", s)
	}
	// With a start offset (an altered offset), the lag counts from it.
	wantCode(t, "initialize with start", h.initialize(group, topicA, 1, 0, 42), nil)
	if s := h.summary(1, group, topicA, 1); s.StartOffset != 42 || s.DeliveryCompleteCount != 0 {
		t.Fatalf("summary of an initialized share-partition with start: %+v", s)
	}
}

func TestInitializeOverwrites(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 1, 0), nil)
	wantCode(t, "read", h.read(group, topicA, 0, 7).ErrorCode, nil)
	wantCode(t, "write", h.write(writeArgs{version: 1, group: group, topic: topicA, stateEpoch: 1, leaderEpoch: 7, start: 5, deliveryComplete: 2,
		batches: []stateBatch{sb(5, 9, acked, 1)}}), nil)
	snapshotEpoch := h.c.states[partitionKey{group, topicA, 0}].snapshotEpoch

	wantCode(t, "re-initialize", h.initialize(group, topicA, 0, 2, 100), nil)
	r := h.read(group, topicA, 0, 7)
	if r.StateEpoch != 2 || r.StartOffset != 100 || len(r.StateBatches) != 0 {
		t.Fatalf("read after re-initialize: %+v", r)
	}
	st := h.c.states[partitionKey{group, topicA, 0}]
	if st.snapshotEpoch != snapshotEpoch+1 || st.leaderEpoch != 0 || st.fenceLeaderEpoch != 7 {
		t.Fatalf("re-initialized state %+v: the snapshot epoch goes on, the leader epoch is 0, its fence stays", st)
	}
	// The fence stays at 7, so the leader that read at 7 still reads.
	wantCode(t, "read at the fence", h.read(group, topicA, 0, 6).ErrorCode, kerr.FencedLeaderEpoch)
}

func TestInitializeErrors(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 5, 0), nil)
	for _, tc := range []struct {
		name       string
		group      string
		topic      [16]byte
		partition  int32
		stateEpoch int32
		start      int64
		want       *kerr.Error
	}{
		{"older state epoch", group, topicA, 0, 4, 0, kerr.FencedStateEpoch},
		{"empty group", "", topicA, 0, 5, 0, kerr.InvalidRequest},
		{"negative partition", group, topicA, -1, 5, 0, kerr.InvalidRequest},
		{"group too long for a key", strings.Repeat("g", maxKeyStringBytes+1), topicA, 0, 5, 0, kerr.InvalidRequest},
		{"start below -1", group, topicA, 0, 5, -2, kerr.InvalidRequest},
		{"unknown topic", group, topicGone, 0, 5, 0, kerr.UnknownTopicOrPartition},
		{"zero topic id", group, [16]byte{}, 0, 5, 0, kerr.UnknownTopicOrPartition},
		{"partition past the count", group, topicB, 1, 5, 0, kerr.UnknownTopicOrPartition},
	} {
		n := len(h.records)
		wantCode(t, tc.name, h.initialize(tc.group, tc.topic, tc.partition, tc.stateEpoch, tc.start), tc.want)
		if len(h.records) != n {
			t.Fatalf("%s: a refused initialize wrote a record", tc.name)
		}
	}
	// The same epoch, a newer one, and -1 (no check) are taken.
	for _, epoch := range []int32{5, 6, -1} {
		wantCode(t, "initialize", h.initialize(group, topicA, 0, epoch, 0), nil)
	}
}

func TestWrite(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 1, 0), nil)
	w := writeArgs{version: 1, group: group, topic: topicA, stateEpoch: 1, leaderEpoch: 3, start: 0, deliveryComplete: 0,
		batches: []stateBatch{sb(0, 9, avail, 1)}}
	wantCode(t, "write", h.write(w), nil)
	w.start, w.deliveryComplete, w.batches = 2, 3, []stateBatch{sb(2, 4, acked, 1), sb(8, 12, avail, 2)}
	wantCode(t, "write", h.write(w), nil)

	if s := h.summary(1, group, topicA, 0); s.DeliveryCompleteCount != 3 || s.LeaderEpoch != 0 || s.StateEpoch != 1 {
		t.Fatalf("summary after writes: %+v (a write changes no epoch)", s)
	}
	r := h.read(group, topicA, 0, 3)
	want := []stateBatch{sb(2, 4, acked, 1), sb(5, 7, avail, 1), sb(8, 12, avail, 2)}
	if got := batchesOf(r); r.StartOffset != 2 || !slices.Equal(got, want) {
		t.Fatalf("read after writes: start %d batches %v, want 2 %v", r.StartOffset, got, want)
	}

	// Start -1 keeps the start; v0 has no count, which becomes unknown.
	w.version, w.start, w.batches = 0, -1, []stateBatch{sb(2, 4, arch, 1)}
	wantCode(t, "write v0", h.write(w), nil)
	if s := h.summary(1, group, topicA, 0); s.StartOffset != 2 || s.DeliveryCompleteCount != -1 {
		t.Fatalf("summary after a v0 write without start: %+v", s)
	}
	// A lower ranked batch does not undo a higher one.
	w.batches = []stateBatch{sb(0, 12, avail, 1)}
	wantCode(t, "write", h.write(w), nil)
	want = []stateBatch{sb(2, 4, arch, 1), sb(5, 7, avail, 1), sb(8, 12, avail, 2)}
	if got := batchesOf(h.read(group, topicA, 0, 3)); !slices.Equal(got, want) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

func batchesOf(r kmsg.ReadShareGroupStateResponseTopicPartition) []stateBatch {
	var out []stateBatch
	for _, b := range r.StateBatches {
		out = append(out, sb(b.FirstOffset, b.LastOffset, deliveryState(b.DeliveryState), b.DeliveryCount))
	}
	return out
}

func TestWriteErrors(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 5, 0), nil)
	wantCode(t, "read at 4", h.read(group, topicA, 0, 4).ErrorCode, nil)
	ok := writeArgs{version: 1, group: group, topic: topicA, stateEpoch: 5, leaderEpoch: 4, start: 0, deliveryComplete: 0}
	for _, tc := range []struct {
		name   string
		mutate func(w *writeArgs)
		want   *kerr.Error
	}{
		{"uninitialized partition", func(w *writeArgs) { w.partition = 1 }, kerr.InvalidRequest},
		{"uninitialized group", func(w *writeArgs) { w.group = "other" }, kerr.InvalidRequest},
		{"older leader epoch", func(w *writeArgs) { w.leaderEpoch = 3 }, kerr.FencedLeaderEpoch},
		{"older state epoch", func(w *writeArgs) { w.stateEpoch = 4 }, kerr.FencedStateEpoch},
		{"both older: the leader epoch first", func(w *writeArgs) { w.stateEpoch, w.leaderEpoch = 4, 3 }, kerr.FencedLeaderEpoch},
		{"empty group", func(w *writeArgs) { w.group = "" }, kerr.InvalidRequest},
		{"negative partition", func(w *writeArgs) { w.partition = -3 }, kerr.InvalidRequest},
		{"start below -1", func(w *writeArgs) { w.start = -2 }, kerr.InvalidRequest},
		{"count below -1", func(w *writeArgs) { w.deliveryComplete = -2 }, kerr.InvalidRequest},
		{"reversed batch", func(w *writeArgs) { w.batches = []stateBatch{{Offsets: base.Range{Start: 5, End: 4}}} }, kerr.InvalidRequest},
		{"acquired batch", func(w *writeArgs) { w.batches = []stateBatch{sb(5, 6, 1, 1)} }, kerr.InvalidRequest},
		{"unknown topic", func(w *writeArgs) { w.topic = topicGone }, kerr.InvalidRequest}, // no state comes first
	} {
		w := ok
		tc.mutate(&w)
		n := len(h.records)
		wantCode(t, tc.name, h.write(w), tc.want)
		if len(h.records) != n {
			t.Fatalf("%s: a refused write wrote a record", tc.name)
		}
	}
	// -1 skips either check; newer epochs are taken but not stored.
	for _, w := range []writeArgs{
		{version: 1, group: group, topic: topicA, stateEpoch: -1, leaderEpoch: -1, start: -1, deliveryComplete: -1},
		{version: 1, group: group, topic: topicA, stateEpoch: 9, leaderEpoch: 9, start: -1, deliveryComplete: -1},
	} {
		wantCode(t, "write", h.write(w), nil)
	}
	if st := h.c.states[partitionKey{group, topicA, 0}]; st.fenceLeaderEpoch != 4 || st.fenceStateEpoch != 5 {
		t.Fatalf("a write moved the fences to %d %d", st.fenceLeaderEpoch, st.fenceStateEpoch)
	}
}

func TestWriteUnknownTopicWithState(t *testing.T) {
	// The metadata check comes after the state checks (Kafka's order): a
	// topic deleted after it was initialized answers UNKNOWN_TOPIC_OR_PARTITION.
	h := newHarness(t)
	known := true
	h.opts.PartitionCount = func(id [16]byte) (int32, bool) { return 1, known }
	h.c = New(h.opts)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 0, 0), nil)
	known = false
	wantCode(t, "write", h.write(writeArgs{group: group, topic: topicA, start: -1}), kerr.UnknownTopicOrPartition)
	wantCode(t, "stale write", h.write(writeArgs{group: group, topic: topicA, start: -1, stateEpoch: -5}), kerr.FencedStateEpoch)
	wantCode(t, "read", h.read(group, topicA, 0, 0).ErrorCode, kerr.UnknownTopicOrPartition)
	wantCode(t, "summary", h.summary(1, group, topicA, 0).ErrorCode, kerr.UnknownTopicOrPartition)
	wantCode(t, "delete", h.deleteState(group, topicA, 0), kerr.UnknownTopicOrPartition)
}

func TestRead(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "read of nothing", h.read(group, topicA, 0, 0).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 0, 10), nil)

	n := len(h.records)
	wantCode(t, "read at the stored epoch", h.read(group, topicA, 0, 0).ErrorCode, nil)
	if len(h.records) != n {
		t.Fatal("a read at the stored leader epoch wrote a record")
	}
	wantCode(t, "read at a newer epoch", h.read(group, topicA, 0, 2).ErrorCode, nil)
	if len(h.records) != n+1 {
		t.Fatal("a read at a newer leader epoch wrote no record")
	}
	if s := h.summary(1, group, topicA, 0); s.LeaderEpoch != 2 || s.StartOffset != 10 {
		t.Fatalf("summary after the epoch moved: %+v", s)
	}
	wantCode(t, "read at an older epoch", h.read(group, topicA, 0, 1).ErrorCode, kerr.FencedLeaderEpoch)
	wantCode(t, "read without epoch", h.read(group, topicA, 0, -1).ErrorCode, kerr.FencedLeaderEpoch)
	wantCode(t, "write at the older epoch", h.write(writeArgs{group: group, topic: topicA, leaderEpoch: 1, start: -1}), kerr.FencedLeaderEpoch)
	wantCode(t, "empty group", h.read("", topicA, 0, 2).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "negative partition", h.read(group, topicA, -1, 2).ErrorCode, kerr.InvalidRequest)
	if r := h.read(group, topicA, 0, 1); r.ErrorMessage == nil || r.StateBatches != nil {
		t.Fatalf("a fenced read answered %+v", r)
	}
}

func TestReadSummary(t *testing.T) {
	h := newHarness(t)
	for _, version := range []int16{0, 1} {
		s := h.summary(version, group, topicA, 0)
		wantCode(t, "summary of nothing", s.ErrorCode, nil)
		if s.StartOffset != -1 || s.DeliveryCompleteCount != -1 || s.LeaderEpoch != 0 || s.StateEpoch != 0 {
			t.Fatalf("summary v%d of nothing: %+v", version, s)
		}
	}
	wantCode(t, "unknown topic", h.summary(1, group, topicGone, 0).ErrorCode, kerr.UnknownTopicOrPartition)
	wantCode(t, "negative partition", h.summary(1, group, topicA, -1).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "empty group", h.summary(1, "", topicA, 0).ErrorCode, kerr.InvalidRequest)

	wantCode(t, "initialize", h.initialize(group, topicA, 0, 4, 7), nil)
	wantCode(t, "read", h.read(group, topicA, 0, 3).ErrorCode, nil)
	n := len(h.records)
	s := h.summary(1, group, topicA, 0)
	if s.StateEpoch != 4 || s.LeaderEpoch != 3 || s.StartOffset != 7 || s.DeliveryCompleteCount != 0 {
		t.Fatalf("summary: %+v", s)
	}
	h.summary(1, group, topicA, 0)
	if len(h.records) != n {
		t.Fatal("a summary wrote a record")
	}
}

func TestDelete(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "delete of nothing", h.deleteState(group, topicA, 0), nil)
	if len(h.records) != 0 {
		t.Fatal("deleting nothing wrote a record")
	}
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 9, 0), nil)
	wantCode(t, "read", h.read(group, topicA, 0, 9).ErrorCode, nil)
	wantCode(t, "delete", h.deleteState(group, topicA, 0), nil)
	if last := h.records[len(h.records)-1]; last.Value != nil {
		t.Fatalf("delete wrote %+v, want a tombstone", last)
	}
	wantCode(t, "read after delete", h.read(group, topicA, 0, 9).ErrorCode, kerr.InvalidRequest)
	if s := h.summary(1, group, topicA, 0); s.StartOffset != -1 {
		t.Fatalf("summary after delete: %+v", s)
	}
	// A tombstone forgets the fences: epochs start over.
	wantCode(t, "initialize after delete", h.initialize(group, topicA, 0, 0, 0), nil)
	wantCode(t, "read after delete", h.read(group, topicA, 0, 0).ErrorCode, nil)

	wantCode(t, "unknown topic", h.deleteState(group, topicGone, 0), kerr.UnknownTopicOrPartition)
	wantCode(t, "empty group", h.deleteState("", topicA, 0), kerr.InvalidRequest)
	wantCode(t, "negative partition", h.deleteState(group, topicA, -2), kerr.InvalidRequest)
}

func TestRequestOfSeveralPartitions(t *testing.T) {
	h := newHarness(t)
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = group
	part := func(p int32, epoch int32) kmsg.InitializeShareGroupStateRequestTopicPartition {
		return kmsg.InitializeShareGroupStateRequestTopicPartition{Partition: p, StateEpoch: epoch, StartOffset: -1}
	}
	req.Topics = []kmsg.InitializeShareGroupStateRequestTopic{
		{TopicID: topicA, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{part(1, 3), part(0, 0), part(-1, 0), part(1, 2)}},
		{TopicID: topicGone, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{part(0, 0)}},
		{TopicID: topicB, Partitions: []kmsg.InitializeShareGroupStateRequestTopicPartition{part(0, 0)}},
	}
	resp := h.do(req).(*kmsg.InitializeShareGroupStateResponse)
	// The second initialize of topicA-1 sees the first one's epoch.
	want := [][]int16{{0, 0, kerr.InvalidRequest.Code, kerr.FencedStateEpoch.Code}, {kerr.UnknownTopicOrPartition.Code}, {0}}
	if len(resp.Topics) != len(want) {
		t.Fatalf("answered %d topics", len(resp.Topics))
	}
	for i, rt := range resp.Topics {
		if rt.TopicID != req.Topics[i].TopicID || len(rt.Partitions) != len(want[i]) {
			t.Fatalf("topic %d answered as %+v", i, rt)
		}
		for j, rp := range rt.Partitions {
			if rp.Partition != req.Topics[i].Partitions[j].Partition || rp.ErrorCode != want[i][j] {
				t.Fatalf("topic %d partition %d answered %+v, want code %d", i, j, rp, want[i][j])
			}
		}
	}
	if len(h.records) != 3 {
		t.Fatalf("%d records for 3 initialized partitions", len(h.records))
	}
}

func TestErrorResponseAnswersEveryPartition(t *testing.T) {
	code := kerr.CoordinatorLoadInProgress.Code
	topics := [][16]byte{topicA, topicB}
	partitions := []int32{2, 0, 1}
	initialize := kmsg.NewPtrInitializeShareGroupStateRequest()
	read := kmsg.NewPtrReadShareGroupStateRequest()
	write := kmsg.NewPtrWriteShareGroupStateRequest()
	write.Version = 1
	del := kmsg.NewPtrDeleteShareGroupStateRequest()
	summary := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	summary.Version = 1
	for _, id := range topics {
		it := kmsg.InitializeShareGroupStateRequestTopic{TopicID: id}
		rt := kmsg.ReadShareGroupStateRequestTopic{TopicID: id}
		wt := kmsg.WriteShareGroupStateRequestTopic{TopicID: id}
		dt := kmsg.DeleteShareGroupStateRequestTopic{TopicID: id}
		st := kmsg.ReadShareGroupStateSummaryRequestTopic{TopicID: id}
		for _, p := range partitions {
			it.Partitions = append(it.Partitions, kmsg.InitializeShareGroupStateRequestTopicPartition{Partition: p})
			rt.Partitions = append(rt.Partitions, kmsg.ReadShareGroupStateRequestTopicPartition{Partition: p})
			wt.Partitions = append(wt.Partitions, kmsg.WriteShareGroupStateRequestTopicPartition{Partition: p})
			dt.Partitions = append(dt.Partitions, kmsg.DeleteShareGroupStateRequestTopicPartition{Partition: p})
			st.Partitions = append(st.Partitions, kmsg.ReadShareGroupStateSummaryRequestTopicPartition{Partition: p})
		}
		initialize.Topics = append(initialize.Topics, it)
		read.Topics = append(read.Topics, rt)
		write.Topics = append(write.Topics, wt)
		del.Topics = append(del.Topics, dt)
		summary.Topics = append(summary.Topics, st)
	}
	type answered struct {
		id        [16]byte
		partition int32
		code      int16
	}
	var want []answered
	for _, id := range topics {
		for _, p := range partitions {
			want = append(want, answered{id, p, code})
		}
	}
	for _, req := range []kmsg.Request{initialize, read, write, del, summary} {
		resp := ErrorResponse(req, code)
		if resp.Key() != req.Key() || resp.GetVersion() != req.GetVersion() {
			t.Fatalf("%T answered with %T v%d", req, resp, resp.GetVersion())
		}
		checkEncodes(t, resp)
		var got []answered
		switch r := resp.(type) {
		case *kmsg.InitializeShareGroupStateResponse:
			for _, rt := range r.Topics {
				for _, p := range rt.Partitions {
					got = append(got, answered{rt.TopicID, p.Partition, p.ErrorCode})
				}
			}
		case *kmsg.ReadShareGroupStateResponse:
			for _, rt := range r.Topics {
				for _, p := range rt.Partitions {
					got = append(got, answered{rt.TopicID, p.Partition, p.ErrorCode})
				}
			}
		case *kmsg.WriteShareGroupStateResponse:
			for _, rt := range r.Topics {
				for _, p := range rt.Partitions {
					got = append(got, answered{rt.TopicID, p.Partition, p.ErrorCode})
				}
			}
		case *kmsg.DeleteShareGroupStateResponse:
			for _, rt := range r.Topics {
				for _, p := range rt.Partitions {
					got = append(got, answered{rt.TopicID, p.Partition, p.ErrorCode})
				}
			}
		case *kmsg.ReadShareGroupStateSummaryResponse:
			for _, rt := range r.Topics {
				for _, p := range rt.Partitions {
					if p.DeliveryCompleteCount != -1 {
						t.Fatalf("summary error with a delivery complete count: %+v", p)
					}
					got = append(got, answered{rt.TopicID, p.Partition, p.ErrorCode})
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%T: answered %v, want %v", req, got, want)
		}
	}
}

func TestHandlePanicsOnWhatItDoesNotServe(t *testing.T) {
	for _, op := range []runtime.Op{
		{Event: struct{}{}},
		{Req: kmsg.NewPtrFindCoordinatorRequest()},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("Handle(%+v) did not panic", op)
				}
			}()
			New(Options{}).Handle(op, t0)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Fatal("ErrorResponse of an unserved request did not panic")
		}
	}()
	ErrorResponse(kmsg.NewPtrFindCoordinatorRequest(), 1)
}

func TestNoMetadataHookTakesEveryTopicButZero(t *testing.T) {
	c := New(Options{})
	res := c.Handle(runtime.Op{Token: 1, Req: initReq(group, topicGone, 7, 0, -1)}, t0)
	if code := res.Replies[0].Resp.(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode; code != 0 || len(res.Records) != 1 {
		t.Fatalf("initialize without metadata: code %d, %d records", code, len(res.Records))
	}
	res = c.Handle(runtime.Op{Token: 2, Req: initReq(group, [16]byte{}, 0, 0, -1)}, t0)
	if code := res.Replies[0].Resp.(*kmsg.InitializeShareGroupStateResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("initialize of the zero topic id: code %d", code)
	}
}

func TestTimestampsComeFromNow(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 0, 0), nil)
	st := h.c.states[partitionKey{group, topicA, 0}]
	if st.createMs != t0.UnixMilli() || st.writeMs != t0.UnixMilli() {
		t.Fatalf("timestamps %d %d, want %d", st.createMs, st.writeMs, t0.UnixMilli())
	}
	h.now = h.now.Add(time.Minute)
	wantCode(t, "write", h.write(writeArgs{group: group, topic: topicA, start: -1}), nil)
	if st := h.c.states[partitionKey{group, topicA, 0}]; st.writeMs != h.now.UnixMilli() {
		t.Fatalf("write timestamp %d, want %d", st.writeMs, h.now.UnixMilli())
	}
}

// TestRefusedDeleteWritesNothing: a delete answered with an error leaves
// the state and writes no tombstone; the error and the log agree.
func TestRefusedDeleteWritesNothing(t *testing.T) {
	h := newHarness(t)
	known := true
	h.opts.PartitionCount = func(id [16]byte) (int32, bool) { return 1, known }
	h.c = New(h.opts)
	wantCode(t, "initialize", h.initialize(group, topicA, 0, 0, 0), nil)
	n := len(h.records)
	known = false
	wantCode(t, "delete of a topic the metadata lost", h.deleteState(group, topicA, 0), kerr.UnknownTopicOrPartition)
	if len(h.records) != n || h.c.states[partitionKey{group, topicA, 0}] == nil {
		t.Fatal("a refused delete removed the state")
	}
}
