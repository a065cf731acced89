package group

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func fetchV7(group string, topics map[string][]int32) *kmsg.OffsetFetchRequest {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 7
	req.Group = group
	for t, ps := range topics {
		req.Topics = append(req.Topics, kmsg.OffsetFetchRequestTopic{Topic: t, Partitions: ps})
	}
	return req
}

func fetched(r kmsg.Response) map[int32]int64 {
	out := map[int32]int64{}
	for _, t := range r.(*kmsg.OffsetFetchResponse).Topics {
		for _, p := range t.Partitions {
			out[p.Partition] = p.Offset
		}
	}
	return out
}

func TestOffsetCommitAndFetch(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 1)
	if codes := commitCodes(h.resp(h.do(commitReq("g", ids[0], gen, "t", 10, 20), "c"))); !slices.Equal(codes, []int16{0, 0}) {
		t.Fatalf("member commit codes %v", codes)
	}
	for _, tc := range []struct {
		name string
		req  *kmsg.OffsetCommitRequest
		want *kerr.Error
	}{
		{"wrong generation", commitReq("g", ids[0], gen+1, "t", 1), kerr.IllegalGeneration},
		{"unknown member", commitReq("g", "x", gen, "t", 1), kerr.UnknownMemberID},
		{"simple commit to a live group", commitReq("g", "", -1, "t", 1), kerr.UnknownMemberID},
		{"unknown group with a generation", commitReq("nope", "m", 3, "t", 1), kerr.IllegalGeneration},
	} {
		for _, c := range commitCodes(h.resp(h.do(tc.req, "c"))) {
			wantCode(t, tc.name, c, tc.want)
		}
	}
	got := fetched(h.resp(h.do(fetchV7("g", map[string][]int32{"t": {0, 1, 2}}), "c")))
	if got[0] != 10 || got[1] != 20 || got[2] != -1 {
		t.Fatalf("fetched %v", got)
	}
	all := fetched(h.resp(h.do(fetchV7("g", nil), "c")))
	if len(all) != 2 || all[1] != 20 {
		t.Fatalf("fetch of all topics %v", all)
	}

	// A simple commit creates an offsets-only group.
	if codes := commitCodes(h.resp(h.do(commitReq("simple", "", -1, "u", 7), "c"))); codes[0] != 0 {
		t.Fatalf("simple commit codes %v", codes)
	}
	v8 := kmsg.NewPtrOffsetFetchRequest()
	v8.Version = 8
	v8.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}, {Group: "simple", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "u", Partitions: []int32{0}}}}, {Group: "absent"}}
	groups := h.resp(h.do(v8, "c")).(*kmsg.OffsetFetchResponse).Groups
	if len(groups) != 3 || len(groups[0].Topics) != 1 || groups[1].Topics[0].Partitions[0].Offset != 7 || len(groups[2].Topics) != 0 {
		t.Fatalf("v8 fetch %+v", groups)
	}
	if e := groups[1].Topics[0].Partitions[0]; e.LeaderEpoch != 3 || *e.Metadata != "m" {
		t.Fatalf("v8 fetch partition %+v", e)
	}
}

func TestOffsetCommitDuringCompletingRebalance(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("g", 2)
	h.do(joinReq("g", ids[0], nil), "c")
	gen := h.joinResp(h.do(joinReq("g", ids[1], nil), "c")).Generation
	wantCode(t, "commit while completing", commitCodes(h.resp(h.do(commitReq("g", ids[1], gen, "t", 1), "c")))[0], kerr.RebalanceInProgress)
}

func TestOffsetMetadataTooLarge(t *testing.T) {
	opts := testOptions()
	opts.OffsetMetadataMaxBytes = 1
	h := newHarness(t, opts)
	req := commitReq("s", "", -1, "t", 5)
	req.Topics[0].Partitions[0].Metadata = kmsg.StringPtr("too long")
	wantCode(t, "commit", commitCodes(h.resp(h.do(req, "c")))[0], kerr.OffsetMetadataTooLarge)
	if len(h.records) != 0 || len(h.c.groups) != 0 {
		t.Fatal("a refused commit left state behind")
	}
}

func TestDeleteGroups(t *testing.T) {
	h := newHarness(t, testOptions())
	h.stableGroup("live", 1)
	h.do(commitReq("empty", "", -1, "t", 1, 2), "c")
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version = 2
	req.Groups = []string{"live", "empty", "absent"}
	resp := h.resp(h.do(req, "c")).(*kmsg.DeleteGroupsResponse)
	wantCode(t, "live", resp.Groups[0].ErrorCode, kerr.NonEmptyGroup)
	wantCode(t, "empty", resp.Groups[1].ErrorCode, nil)
	wantCode(t, "absent", resp.Groups[2].ErrorCode, kerr.GroupIDNotFound)
	tail := h.records[len(h.records)-3:]
	for i, r := range tail {
		if r.Value != nil {
			t.Fatalf("record %d of the delete is not a tombstone", i)
		}
	}
	if _, ok := h.c.groups["empty"]; ok {
		t.Fatal("the deleted group is still there")
	}
}

func TestOffsetDelete(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, gen := h.stableGroup("g", 1) // subscribed to "t"
	h.do(commitReq("g", ids[0], gen, "t", 1), "c")
	h.do(commitReq("g", ids[0], gen, "old", 1, 2), "c")
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = "g"
	req.Topics = []kmsg.OffsetDeleteRequestTopic{
		{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
		{Topic: "old", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}, {Partition: 1}}},
	}
	resp := h.resp(h.do(req, "c")).(*kmsg.OffsetDeleteResponse)
	wantCode(t, "top level", resp.ErrorCode, nil)
	wantCode(t, "subscribed topic", resp.Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)
	wantCode(t, "unsubscribed topic", resp.Topics[1].Partitions[0].ErrorCode, nil)
	if got := fetched(h.resp(h.do(fetchV7("g", nil), "c"))); len(got) != 1 {
		t.Fatalf("offsets after delete %v", got)
	}
	req.Group = "absent"
	wantCode(t, "absent group", h.resp(h.do(req, "c")).(*kmsg.OffsetDeleteResponse).ErrorCode, kerr.GroupIDNotFound)
}

func TestOffsetsExpireAfterGroupEmptiesForRetention(t *testing.T) {
	h := newHarness(t, retentionOptions())
	ids, gen := h.stableGroup("g", 1)
	h.do(commitReq("g", ids[0], gen, "t", 5), "c")
	h.do(commitReq("simple", "", -1, "t", 9), "c")
	h.advance(time.Second) // arms the expiry scan
	// A live group's offsets of subscribed topics never expire.
	h.heartbeatFor(90*time.Minute, "g", gen, ids[0])
	if _, ok := h.c.groups["simple"]; ok {
		t.Fatal("the simple group's offset outlived the retention")
	}
	if len(h.c.groups["g"].offsets) != 1 {
		t.Fatal("a live group's offset expired")
	}
	lr := kmsg.NewPtrLeaveGroupRequest()
	lr.Group, lr.MemberID = "g", ids[0]
	h.do(lr, "c")
	h.advance(59 * time.Minute)
	if len(h.c.groups["g"].offsets) != 1 {
		t.Fatal("offsets expired before the retention since the group emptied")
	}
	h.advance(2 * time.Minute)
	if _, ok := h.c.groups["g"]; ok {
		t.Fatal("the empty group outlived its offsets")
	}
	checkReplay(t, retentionOptions(), h)
}

func checkReplay(t *testing.T, opts Options, h *harness) {
	t.Helper()
	live, loaded := snapshotOf(h.c), snapshotOf(replayAll(t, opts, h.records))
	if len(live) != len(loaded) {
		t.Fatalf("replay has %d groups, live %d", len(loaded), len(live))
	}
	for id, lg := range live {
		rg, ok := loaded[id]
		if !ok || rg.meta != lg.meta || len(rg.offsets) != len(lg.offsets) || fmt.Sprint(rg.pending) != fmt.Sprint(lg.pending) {
			t.Fatalf("group %s: replay %+v, live %+v", id, rg, lg)
		}
		for tp, v := range lg.offsets {
			if rg.offsets[tp] != v {
				t.Fatalf("group %s %v: replay %s, live %s", id, tp, rg.offsets[tp], v)
			}
		}
	}
}

func TestReplayRestoresStableGroup(t *testing.T) {
	opts := testOptions()
	h := newHarness(t, opts)
	ids, gen := h.stableGroup("g", 3)
	h.do(commitReq("g", ids[1], gen, "t", 4, 5, 6), "c")
	checkReplay(t, opts, h)

	// The reloaded coordinator serves the same members and generation.
	h2 := newHarness(t, opts)
	h2.c = replayAll(t, opts, h.records)
	h2.advance(0)
	g := h2.c.groups["g"]
	if g.state != stateStable || g.generation != gen || g.leader != ids[0] || len(g.members) != 3 {
		t.Fatalf("loaded group: state %v gen %d leader %s members %d", g.state, g.generation, g.leader, len(g.members))
	}
	wantCode(t, "heartbeat after load", hbCode(h2, "g", ids[2], gen), nil)
	if got := string(h2.syncResp(h2.do(syncReq("g", ids[2], gen, nil), "c")).MemberAssignment); got != "a-"+ids[2] {
		t.Fatalf("assignment after load %q", got)
	}
	// Members that stay silent after a load expire like any other.
	h2.advance(testSession)
	h2.advance(testSession)
	if len(g.members) != 0 && g.state == stateStable {
		t.Fatal("loaded members never expired")
	}
}

func TestReplayRejectsGarbage(t *testing.T) {
	c, _ := New(testOptions())
	for _, tc := range []struct{ key, value []byte }{
		{[]byte{0}, nil},
		{[]byte{0, 9, 0}, nil},
		{groupKey("g"), []byte{0, 3, 0xff}},
		{offsetKey("g", tpOf("t", 0)), []byte{0, 7}},
	} {
		if err := c.Replay(tc.key, tc.value); err == nil {
			t.Fatalf("Replay(%x, %x) accepted garbage", tc.key, tc.value)
		}
	}
}

func TestDescribeAndListGroups(t *testing.T) {
	h := newHarness(t, testOptions())
	ids, _ := h.stableGroup("stable", 2)
	h.do(commitReq("empty", "", -1, "t", 1), "c")
	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Version = 6
	d.Groups = []string{"stable", "empty", "absent"}
	groups := h.resp(h.do(d, "c")).(*kmsg.DescribeGroupsResponse).Groups
	if g := groups[0]; g.State != "Stable" || g.Protocol != "range" || len(g.Members) != 2 || g.Members[1].MemberID != ids[1] || string(g.Members[1].MemberAssignment) != "a-"+ids[1] || g.Members[0].ClientHost != "/10.0.0.1" {
		t.Fatalf("stable group %+v", g)
	}
	if groups[1].State != "Empty" || groups[2].State != "Dead" {
		t.Fatalf("states %s %s", groups[1].State, groups[2].State)
	}
	wantCode(t, "absent v6", groups[2].ErrorCode, kerr.GroupIDNotFound)

	l := kmsg.NewPtrListGroupsRequest()
	l.Version = 5
	list := func() []string {
		var out []string
		for _, g := range h.resp(h.do(l, "c")).(*kmsg.ListGroupsResponse).Groups {
			out = append(out, g.Group+":"+g.GroupState)
		}
		return out
	}
	if got := list(); !slices.Equal(got, []string{"empty:Empty", "stable:Stable"}) {
		t.Fatalf("list %v", got)
	}
	l.StatesFilter = []string{"stable"}
	if got := list(); !slices.Equal(got, []string{"stable:Stable"}) {
		t.Fatalf("list stable %v", got)
	}
	l.StatesFilter, l.TypesFilter = nil, []string{"consumer"}
	if got := list(); len(got) != 0 {
		t.Fatalf("list of consumer-protocol groups %v", got)
	}
}

func TestErrorResponseCoversEveryServedRequest(t *testing.T) {
	code := kerr.CoordinatorLoadInProgress.Code
	commit := commitReq("g", "m", 1, "t", 1, 2)
	fetch := fetchV7("g", map[string][]int32{"t": {0}})
	for _, req := range []kmsg.Request{
		joinReq("g", "m", nil), syncReq("g", "m", 1, nil), heartbeatReq("g", "m", 1),
		kmsg.NewPtrLeaveGroupRequest(), commit, fetch, kmsg.NewPtrOffsetDeleteRequest(),
		&kmsg.DescribeGroupsRequest{Groups: []string{"g"}}, kmsg.NewPtrListGroupsRequest(),
		&kmsg.DeleteGroupsRequest{Groups: []string{"g"}}, joinRequest(),
		&kmsg.ConsumerGroupDescribeRequest{Groups: []string{"g"}},
	} {
		if _, ok := MaxVersions[req.Key()]; !ok {
			t.Fatalf("%T is not in MaxVersions", req)
		}
		resp := ErrorResponse(req, code)
		if resp.Key() != req.Key() {
			t.Fatalf("%T answered with %T", req, resp)
		}
	}
	if codes := commitCodes(ErrorResponse(commit, code)); len(codes) != 2 || codes[0] != code {
		t.Fatalf("commit error codes %v", codes)
	}
	if p := ErrorResponse(fetch, code).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0]; p.ErrorCode != code {
		t.Fatalf("fetch error partition %+v", p)
	}
}
