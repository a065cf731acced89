package group

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// txnCommitReq is a v3 TxnOffsetCommit of a standalone producer (no member
// fields): offsets[i] for partition i of topic.
func txnCommitReq(group string, pid int64, epoch int16, topic string, offsets ...int64) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = 3
	req.TransactionalID = "tx"
	req.Group = group
	req.ProducerID, req.ProducerEpoch = pid, epoch
	t := kmsg.TxnOffsetCommitRequestTopic{Topic: topic}
	for p, o := range offsets {
		t.Partitions = append(t.Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{Partition: int32(p), Offset: o, LeaderEpoch: 2, Metadata: kmsg.StringPtr("tx")})
	}
	req.Topics = append(req.Topics, t)
	return req
}

func txnCodes(r kmsg.Response) []int16 {
	var out []int16
	for _, t := range r.(*kmsg.TxnOffsetCommitResponse).Topics {
		for _, p := range t.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

// txnCommit runs req and requires every partition to have code want.
func (h *harness) txnCommit(req *kmsg.TxnOffsetCommitRequest, want *kerr.Error) {
	h.tb.Helper()
	for _, code := range txnCodes(h.resp(h.do(req, "c"))) {
		wantCode(h.tb, "txn offset commit", code, want)
	}
}

func ended(pid int64, epoch int16, commit bool) TxnCompleted {
	return TxnCompleted{ProducerID: pid, ProducerEpoch: epoch, Commit: commit, CoordinatorEpoch: 1}
}

// committed is what a v7 OffsetFetch (not RequireStable) shows of topic t.
func (h *harness) committed(group string, ps ...int32) map[int32]int64 {
	h.tb.Helper()
	return fetched(h.resp(h.do(fetchV7(group, map[string][]int32{"t": ps}), "c")))
}

func TestTxnOffsetCommitThenMarker(t *testing.T) {
	for _, tc := range []struct {
		name   string
		commit bool
		want   map[int32]int64
	}{
		{"commit", true, map[int32]int64{0: 10, 1: 20, 2: -1}},
		{"abort", false, map[int32]int64{0: 1, 1: 1, 2: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			h := newHarness(t, opts)
			h.do(commitReq("g", "", -1, "t", 1, 1), "c")
			before := len(h.records)
			h.txnCommit(txnCommitReq("g", 7, 0, "t", 10, 20), nil)
			h.txnCommit(txnCommitReq("only-pending", 7, 0, "t", 5), nil)
			batch := h.records[before:]
			if len(batch) != 3 || batch[0].Txn == nil || *batch[0].Txn != (runtime.Producer{ID: 7}) {
				t.Fatalf("transactional records %+v", batch)
			}
			if got := h.committed("g", 0, 1, 2); !maps.Equal(got, map[int32]int64{0: 1, 1: 1, 2: -1}) {
				t.Fatalf("pending offsets are visible: %v", got)
			}
			if _, ok := h.c.groups["only-pending"]; !ok {
				t.Fatal("a group holding only pending offsets was dropped")
			}
			checkInvariants(t, h.c)
			checkReplay(t, opts, h)

			ev := ended(7, 0, tc.commit)
			ev.CoordinatorEpoch = 5
			if err := h.event(ev); err != nil {
				t.Fatal(err)
			}
			last := h.records[len(h.records)-1]
			if m := last.Marker; m == nil || m.Commit != tc.commit || m.CoordinatorEpoch != 5 || m.Producer != (runtime.Producer{ID: 7}) {
				t.Fatalf("last record %+v is not the marker", last)
			}
			if got := h.committed("g", 0, 1, 2); !maps.Equal(got, tc.want) {
				t.Fatalf("after the marker: %v, want %v", got, tc.want)
			}
			if _, ok := h.c.groups["only-pending"]; ok != tc.commit {
				t.Fatalf("group with only pending offsets kept %v after commit=%v", ok, tc.commit)
			}
			if p := h.c.producers[7]; len(p.groups) != 0 {
				t.Fatalf("producer still holds pending offsets in %v", p.groups)
			}
			checkInvariants(t, h.c)
			checkReplay(t, opts, h)
		})
	}
}

func TestTxnOffsetFetchRequireStable(t *testing.T) {
	h := newHarness(t, testOptions())
	h.do(commitReq("g", "", -1, "t", 1, 1), "c")
	h.txnCommit(txnCommitReq("g", 7, 0, "t", 10), nil) // partition 0 only

	stable := func(version int16, require bool) map[int32]kmsg.OffsetFetchResponseTopicPartition {
		req := fetchV7("g", map[string][]int32{"t": {0, 1}})
		req.Version, req.RequireStable = version, require
		out := map[int32]kmsg.OffsetFetchResponseTopicPartition{}
		for _, p := range h.resp(h.do(req, "c")).(*kmsg.OffsetFetchResponse).Topics[0].Partitions {
			out[p.Partition] = p
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		version int16
		require bool
		want0   *kerr.Error
		offset0 int64
	}{
		{"v7 stable", 7, true, kerr.UnstableOffsetCommit, -1},
		{"v7 not stable", 7, false, nil, 1},
		{"v6 has no RequireStable", 6, true, nil, 1},
	} {
		got := stable(tc.version, tc.require)
		wantCode(t, tc.name+" partition 0", got[0].ErrorCode, tc.want0)
		wantCode(t, tc.name+" partition 1", got[1].ErrorCode, nil)
		if got[0].Offset != tc.offset0 || got[1].Offset != 1 {
			t.Fatalf("%s: offsets %d %d", tc.name, got[0].Offset, got[1].Offset)
		}
	}

	// v8: per group, and for "all topics" too.
	v8 := kmsg.NewPtrOffsetFetchRequest()
	v8.Version, v8.RequireStable = 8, true
	v8.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}, {Group: "absent"}}
	groups := h.resp(h.do(v8, "c")).(*kmsg.OffsetFetchResponse).Groups
	ps := groups[0].Topics[0].Partitions
	if len(ps) != 2 || ps[0].ErrorCode != kerr.UnstableOffsetCommit.Code || ps[1].ErrorCode != 0 || ps[1].Offset != 1 {
		t.Fatalf("v8 stable fetch of all topics %+v", ps)
	}

	if err := h.event(ended(7, 0, true)); err != nil {
		t.Fatal(err)
	}
	got := stable(7, true)
	if got[0].ErrorCode != 0 || got[0].Offset != 10 || got[0].LeaderEpoch != 2 || *got[0].Metadata != "tx" {
		t.Fatalf("stable fetch after the commit %+v", got[0])
	}
}

func TestTxnOffsetCommitFencedByEpoch(t *testing.T) {
	opts := testOptions()
	h := newHarness(t, opts)
	h.txnCommit(txnCommitReq("g", 7, 3, "t", 10), nil)
	steps := []struct {
		name string
		run  func() error // an event's error; nil for a request
		// wantRecords: whether the step writes.
		wantRecords bool
		wantErr     error
		wantCode    *kerr.Error
		req         *kmsg.TxnOffsetCommitRequest
	}{
		{name: "commit of an older epoch", req: txnCommitReq("g", 7, 2, "t", 11), wantCode: kerr.InvalidProducerEpoch},
		{name: "marker of an older epoch", run: func() error { return h.event(ended(7, 2, true)) }, wantErr: ErrStaleMarker},
		{name: "other producer unaffected", req: txnCommitReq("g", 8, 0, "t", 12), wantRecords: true},
		{name: "abort with a bumped epoch", run: func() error {
			return h.event(TxnCompleted{ProducerID: 7, ProducerEpoch: 4, CoordinatorEpoch: 10})
		}, wantRecords: true},
		{name: "commit of the epoch before the bump", req: txnCommitReq("g", 7, 3, "t", 13), wantCode: kerr.InvalidProducerEpoch},
		{name: "marker of a fenced coordinator", run: func() error {
			return h.event(TxnCompleted{ProducerID: 7, ProducerEpoch: 4, Commit: true, CoordinatorEpoch: 9})
		}, wantErr: ErrFencedCoordinator},
		{name: "commit of the current epoch", req: txnCommitReq("g", 7, 4, "t", 14), wantRecords: true},
	}
	for _, s := range steps {
		before := len(h.records)
		if s.req != nil {
			h.txnCommit(s.req, s.wantCode)
		} else if err := s.run(); !errors.Is(err, s.wantErr) || (err == nil) != (s.wantErr == nil) {
			t.Fatalf("%s: error %v, want %v", s.name, err, s.wantErr)
		} else if err != nil && !errors.Is(err, ErrStaleMarker) {
			t.Fatalf("%s: error %v does not match ErrStaleMarker", s.name, err)
		}
		if wrote := len(h.records) > before; wrote != s.wantRecords {
			t.Fatalf("%s: wrote records %v, want %v", s.name, wrote, s.wantRecords)
		}
		checkInvariants(t, h.c)
	}
	if got := h.c.groups["g"].txnOffsets[7][tpOf("t", 0)].offset; got != 14 {
		t.Fatalf("pending offset %d, want 14 (13 was refused, 10 aborted)", got)
	}
	// A reload fences the same way.
	checkReplay(t, opts, h)
	loaded := replayAll(t, opts, h.records)
	if got, want := producersOf(loaded), producersOf(h.c); !maps.Equal(got, want) {
		t.Fatalf("loaded producers %v, live %v", got, want)
	}
	h.c = loaded
	h.txnCommit(txnCommitReq("g", 7, 3, "t", 15), kerr.InvalidProducerEpoch)
}

func TestTxnOffsetsAgainstPlainCommits(t *testing.T) {
	type step struct {
		plain  int64 // a plain commit of this offset, if the others are zero
		txnPID int64 // a TxnOffsetCommit of txnOffset by this producer
		txnOff int64
		endPID int64 // a marker of this producer
		commit bool
	}
	plain := func(o int64) step { return step{plain: o} }
	txn := func(pid, o int64) step { return step{txnPID: pid, txnOff: o} }
	end := func(pid int64, commit bool) step { return step{endPID: pid, commit: commit} }
	for _, tc := range []struct {
		name  string
		steps []step
		want  int64
	}{
		{"pending commit replaces an earlier plain commit", []step{plain(30), txn(1, 10), end(1, true)}, 10},
		{"a plain commit after the pending one wins", []step{txn(1, 10), plain(30), end(1, true)}, 30},
		{"abort keeps the plain commit", []step{plain(30), txn(1, 10), end(1, false)}, 30},
		{"the later of two transactions wins", []step{txn(1, 10), txn(2, 20), end(2, true), end(1, true)}, 20},
		{"the later write of one transaction wins", []step{txn(1, 10), txn(1, 11), end(1, true)}, 11},
		{"abort then a new transaction", []step{txn(1, 10), end(1, false), txn(1, 12), end(1, true)}, 12},
		{"nothing committed", []step{txn(1, 10), end(1, false)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := testOptions()
			h := newHarness(t, opts)
			for _, s := range tc.steps {
				h.advance(time.Second)
				switch {
				case s.txnPID != 0:
					h.txnCommit(txnCommitReq("g", s.txnPID, 0, "t", s.txnOff), nil)
				case s.endPID != 0:
					if err := h.event(ended(s.endPID, 0, s.commit)); err != nil {
						t.Fatal(err)
					}
				default:
					h.do(commitReq("g", "", -1, "t", s.plain), "c")
				}
				checkInvariants(t, h.c)
			}
			if got := h.committed("g", 0)[0]; got != tc.want {
				t.Fatalf("committed %d, want %d", got, tc.want)
			}
			checkReplay(t, opts, h)
		})
	}
}

func TestTxnCompletedForUnknownProducer(t *testing.T) {
	opts := testOptions()
	h := newHarness(t, opts)
	h.do(commitReq("g", "", -1, "t", 1), "c")
	before := snapshotOf(h.c)
	if err := h.event(&TxnCompleted{ProducerID: 99, ProducerEpoch: 4, Commit: true, CoordinatorEpoch: 2}); err != nil {
		t.Fatalf("marker for a producer without pending offsets: %v", err)
	}
	if m := h.records[len(h.records)-1].Marker; m == nil || m.Producer != (runtime.Producer{ID: 99, Epoch: 4}) {
		t.Fatal("no marker written for a producer without pending offsets")
	}
	if after := snapshotOf(h.c); len(after) != len(before) || after["g"].offsets[tpOf("t", 0)] != before["g"].offsets[tpOf("t", 0)] {
		t.Fatalf("the marker changed offsets: %v -> %v", before, after)
	}
	// The marker's epoch now fences the producer.
	h.txnCommit(txnCommitReq("g", 99, 3, "t", 5), kerr.InvalidProducerEpoch)
	checkReplay(t, opts, h)
}

func TestTxnOffsetCommitValidation(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("live", 1)
	inst := kmsg.StringPtr("inst")
	sj := h.joinResp(h.do(joinReq("static", "", inst), "c"))
	h.syncResp(h.do(syncReq("static", sj.MemberID, sj.Generation, map[string][]byte{sj.MemberID: nil}), "c"))
	h.do(commitReq("simple", "", -1, "t", 1), "c")

	withMember := func(group, member string, gen int32, instance *string) *kmsg.TxnOffsetCommitRequest {
		req := txnCommitReq(group, 1, 0, "t", 5)
		req.MemberID, req.Generation, req.InstanceID = member, gen, instance
		return req
	}
	v0 := txnCommitReq("live", 1, 0, "t", 5)
	v0.Version = 0
	v2WithStaleFields := withMember("live", "nobody", 99, nil)
	v2WithStaleFields.Version = 2 // the member fields are not on the wire before v3
	tooLarge := txnCommitReq("simple", 1, 0, "t", 5)
	tooLarge.Topics[0].Partitions[0].Metadata = kmsg.StringPtr(string(make([]byte, 4097)))
	for _, tc := range []struct {
		name string
		req  *kmsg.TxnOffsetCommitRequest
		want *kerr.Error
	}{
		{"empty group id", txnCommitReq("", 1, 0, "t", 5), kerr.InvalidGroupID},
		{"unknown group with a generation", withMember("nope", "m", 1, nil), kerr.IllegalGeneration},
		{"unknown group, standalone producer", txnCommitReq("new", 1, 0, "t", 5), nil},
		{"live group, v0 without member fields", v0, nil},
		{"live group, v2 ignores member fields", v2WithStaleFields, nil},
		{"live group, v3 without member fields", txnCommitReq("live", 1, 0, "t", 5), nil},
		{"member of the current generation", withMember("live", ids[0], gen, nil), nil},
		{"unknown member", withMember("live", "x", gen, nil), kerr.UnknownMemberID},
		{"wrong generation", withMember("live", ids[0], gen+1, nil), kerr.IllegalGeneration},
		{"fenced static member", withMember("static", "old-id", sj.Generation, inst), kerr.FencedInstanceID},
		{"static member", withMember("static", sj.MemberID, sj.Generation, inst), nil},
		{"empty group with a generation", withMember("simple", "m", 0, nil), kerr.UnknownMemberID},
		{"metadata too large", tooLarge, kerr.OffsetMetadataTooLarge},
		{"no producer id", txnCommitReq("simple", -1, 0, "t", 5), kerr.InvalidProducerIDMapping},
		{"no producer epoch", txnCommitReq("simple", 1, -1, "t", 5), kerr.InvalidProducerEpoch},
	} {
		before := len(h.records)
		h.txnCommit(tc.req, tc.want)
		if wrote := len(h.records) > before; wrote != (tc.want == nil) {
			t.Fatalf("%s: wrote records %v", tc.name, wrote)
		}
		checkInvariants(t, h.c)
	}
	if _, ok := h.c.groups["nope"]; ok {
		t.Fatal("a refused commit created a group")
	}
	resp := ErrorResponse(tooLarge, kerr.NotCoordinator.Code)
	if codes := txnCodes(resp); !slices.Equal(codes, []int16{kerr.NotCoordinator.Code}) {
		t.Fatalf("error response codes %v", codes)
	}
}

func TestTxnOffsetCommitDuringCompletingRebalance(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 2)
	h.do(joinReq("g", ids[0], nil), "c")
	gen := h.joinResp(h.do(joinReq("g", ids[1], nil), "c")).Generation
	if h.c.groups["g"].state != stateCompletingRebalance {
		t.Fatalf("state %v", h.c.groups["g"].state)
	}
	// Kafka does not enforce the group state for transactional commits.
	req := txnCommitReq("g", 1, 0, "t", 5)
	req.MemberID, req.Generation = ids[1], gen
	h.txnCommit(req, nil)
}

func TestTxnOffsetsDeletedWithTheirPartitionOrGroup(t *testing.T) {
	opts := testOptions()
	h := newHarness(t, opts)
	h.do(commitReq("g", "", -1, "t", 1), "c")              // committed t-0
	h.txnCommit(txnCommitReq("g", 7, 0, "t", 10, 20), nil) // pending t-0, t-1

	// OffsetDelete of t-1, which only has a pending offset: tombstone.
	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "g"
	del.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 1}}}}
	before := len(h.records)
	wantCode(t, "offset delete", h.resp(h.do(del, "c")).(*kmsg.OffsetDeleteResponse).ErrorCode, nil)
	if len(h.records) != before+1 || h.records[before].Value != nil {
		t.Fatal("no tombstone for a partition with only a pending offset")
	}
	if h.c.groups["g"].hasTxnOffset(tpOf("t", 1)) {
		t.Fatal("the tombstone left the pending offset")
	}
	checkReplay(t, opts, h)

	// DeleteGroups: tombstones for committed and pending partitions.
	h.txnCommit(txnCommitReq("g", 8, 0, "u", 30), nil)
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{"g"}
	before = len(h.records)
	wantCode(t, "delete group", h.resp(h.do(dg, "c")).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, nil)
	if n := len(h.records) - before; n != 3 { // t-0, u-0, the group
		t.Fatalf("delete wrote %d records, want 3", n)
	}
	if _, ok := h.c.groups["g"]; ok {
		t.Fatal("the group survived its deletion")
	}
	// The transactions end after the group is gone: nothing comes back.
	for _, pid := range []int64{7, 8} {
		if err := h.event(ended(pid, 0, true)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := h.c.groups["g"]; ok {
		t.Fatal("a commit marker recreated a deleted group")
	}
	checkInvariants(t, h.c)
	checkReplay(t, opts, h)
}

func TestTxnOffsetsHoldOffExpiry(t *testing.T) {
	h := newHarness(t, retentionOptions())
	h.do(commitReq("g", "", -1, "t", 1, 1), "c")
	h.txnCommit(txnCommitReq("g", 7, 0, "t", 10), nil)    // t-0 pending
	h.txnCommit(txnCommitReq("only", 7, 0, "t", 10), nil) // no committed offsets
	h.advance(time.Second)
	h.advance(2 * time.Hour)
	g := h.c.groups["g"]
	if g == nil || len(g.offsets) != 1 || g.offsets[tpOf("t", 0)].offset != 1 {
		t.Fatal("expiry dropped an offset whose partition has a pending transactional offset")
	}
	if _, ok := h.c.groups["only"]; !ok {
		t.Fatal("expiry deleted a group holding pending transactional offsets")
	}
	checkReplay(t, retentionOptions(), h)
	if err := h.event(ended(7, 0, false)); err != nil {
		t.Fatal(err)
	}
	h.advance(2 * time.Minute)
	if len(h.c.groups) != 0 {
		t.Fatalf("groups left after the abort and expiry: %v", slices.Sorted(maps.Keys(h.c.groups)))
	}
	checkReplay(t, retentionOptions(), h)
}

func TestIdleProducersExpire(t *testing.T) {
	opts := testOptions()
	opts.ProducerIDExpiration = time.Hour
	h := newHarness(t, opts)
	h.txnCommit(txnCommitReq("g", 1, 5, "t", 10), nil)
	h.txnCommit(txnCommitReq("g", 2, 5, "u", 10), nil)
	if err := h.event(ended(1, 5, true)); err != nil {
		t.Fatal(err)
	}
	loadLog := slices.Clone(h.records)
	h.advance(59 * time.Minute)
	h.txnCommit(txnCommitReq("h", 1, 4, "t", 11), kerr.InvalidProducerEpoch)
	h.advance(2 * time.Minute)
	if _, ok := h.c.producers[1]; ok {
		t.Fatal("an idle producer outlived producer id expiration")
	}
	if _, ok := h.c.producers[2]; !ok {
		t.Fatal("a producer with pending offsets expired")
	}
	// Forgotten: its old epoch is no longer fenced (as in Kafka).
	h.txnCommit(txnCommitReq("h", 1, 4, "t", 11), nil)

	// Loaded idle producers start their period at the first Tick.
	h2 := newHarness(t, opts)
	h2.c = replayAll(t, opts, loadLog)
	h2.advance(30 * time.Minute) // the first tick after the load
	h2.advance(59 * time.Minute)
	if _, ok := h2.c.producers[1]; !ok {
		t.Fatal("a loaded producer expired before a full period after the first tick")
	}
	h2.advance(2 * time.Minute)
	if _, ok := h2.c.producers[1]; ok {
		t.Fatal("a loaded idle producer never expired")
	}
}

// producer.id.expiration.ms is read at each check: shortened at run time,
// it forgets a producer idle for longer at once; lengthened, it keeps one
// that the old value would have forgotten.
func TestProducerExpirationFollowsItsCurrentValue(t *testing.T) {
	opts := testOptions()
	expiration := time.Hour
	opts.ProducerIDExpirationNow = func() time.Duration { return expiration }
	h := newHarness(t, opts)
	h.txnCommit(txnCommitReq("g", 1, 5, "t", 10), nil)
	if err := h.event(ended(1, 5, true)); err != nil {
		t.Fatal(err)
	}
	expiration = 3 * time.Hour
	h.advance(2 * time.Hour)
	if _, ok := h.c.producers[1]; !ok {
		t.Fatal("forgotten by the old expiration after it was lengthened")
	}
	expiration = 30 * time.Minute
	h.advance(time.Minute)
	if _, ok := h.c.producers[1]; ok {
		t.Fatal("an idle producer outlived a shortened expiration")
	}
}

func TestReplayTxnRejectsGarbage(t *testing.T) {
	c, _ := New(testOptions())
	p := runtime.Producer{ID: 1}
	for _, tc := range []struct {
		name       string
		p          runtime.Producer
		key, value []byte
	}{
		{"group metadata", p, groupKey("g"), metadataValue(newGroup("g", t0)).AppendTo(nil)},
		{"group tombstone", p, groupKey("g"), nil},
		{"short key", p, []byte{0}, nil},
		{"bad value", p, offsetKey("g", tpOf("t", 0)), []byte{0, 7}},
		{"no producer id", runtime.Producer{ID: -1}, offsetKey("g", tpOf("t", 0)), offsetValue(offsetEntry{})},
	} {
		if err := c.ReplayTxn(tc.p, tc.key, tc.value); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("%s: ReplayTxn error %v", tc.name, err)
		}
	}
	if err := c.ReplayMarker(runtime.Marker{Producer: runtime.Producer{ID: -1}}); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("ReplayMarker of no producer: %v", err)
	}
	if len(c.groups) != 0 || len(c.producers) != 0 || c.offsetOrder != 0 {
		t.Fatal("rejected records changed the state")
	}
}
