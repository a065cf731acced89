package group

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// cgJoinReq is a v1 join of member id to group, subscribing to topics.
func cgJoinReq(group, id string, topics ...string) *kmsg.ConsumerGroupHeartbeatRequest {
	req := joinRequest()
	req.Group, req.MemberID, req.SubscribedTopicNames = group, id, topics
	return req
}

// cgBeatReq is a v1 heartbeat of member id at epoch, owning owned (nil:
// says nothing).
func cgBeatReq(group, id string, epoch int32, owned assignor.Assignment) *kmsg.ConsumerGroupHeartbeatRequest {
	req := beat(id, epoch, owned)
	req.Group = group
	return req
}

func (h *harness) cgBeat(req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	h.tb.Helper()
	return h.resp(h.do(req, "client")).(*kmsg.ConsumerGroupHeartbeatResponse)
}

// cgClient is what a consumer-protocol client knows of itself.
type cgClient struct {
	id    string
	epoch int32
	owned assignor.Assignment
}

// beatMember heartbeats m, reporting what it owns, takes the answer in and
// reports whether it changed anything.
func (h *harness) beatMember(group string, m *cgClient) bool {
	h.tb.Helper()
	resp := h.cgBeat(cgBeatReq(group, m.id, m.epoch, m.owned))
	wantCode(h.tb, "heartbeat of "+m.id, resp.ErrorCode, nil)
	a := assigned(resp)
	changed := resp.MemberEpoch != m.epoch || (a != nil && !a.Equal(m.owned))
	m.epoch = resp.MemberEpoch
	if a != nil {
		m.owned = a
	}
	return changed
}

// settle heartbeats every member, each reporting what it owns, until no
// answer changes anything.
func (h *harness) settle(group string, members []*cgClient) {
	h.tb.Helper()
	for range 10 {
		changed := false
		for _, m := range members {
			changed = h.beatMember(group, m) || changed
		}
		if !changed {
			return
		}
	}
	h.tb.Fatalf("group %s does not settle", group)
}

// stableConsumerGroup forms group of n consumer-protocol members on t1
// and settles it.
func (h *harness) stableConsumerGroup(group string, n int) []*cgClient {
	h.tb.Helper()
	var members []*cgClient
	for i := range n {
		m := &cgClient{id: string(rune('a' + i))}
		resp := h.cgBeat(cgJoinReq(group, m.id, "t1"))
		wantCode(h.tb, "join of "+m.id, resp.ErrorCode, nil)
		m.epoch, m.owned = resp.MemberEpoch, assigned(resp)
		members = append(members, m)
	}
	h.settle(group, members)
	return members
}

func (h *harness) checkReload() {
	h.tb.Helper()
	checkInvariants(h.tb, h.c)
	if got, want := snapshotOf(replayAll(h.tb, testOptions(), h.records)), snapshotOf(h.c); !reflect.DeepEqual(got, want) {
		h.tb.Fatalf("reload differs:\n got %+v\nwant %+v", got, want)
	}
}

func offsetCommitV9(group, member string, epoch int32, topic string, offsets ...int64) *kmsg.OffsetCommitRequest {
	req := commitReq(group, member, epoch, topic, offsets...)
	req.Version = 9
	return req
}

// Two consumer-protocol members share t1 through the coordinator: they
// settle with two partitions each, commit and fetch at their epochs, show
// in ListGroups and ConsumerGroupDescribe (not in DescribeGroups), refuse
// classic members and deletion while they are in; one leaves, the
// other's session ends, and the empty group is deleted. The records
// reload to the same state at every step.
func TestConsumerProtocolGroupThroughTheCoordinator(t *testing.T) {
	h := newHarness(t, testOptions())
	members := h.stableConsumerGroup("g", 2)
	for _, m := range members {
		if n := len(m.owned[cgT1]); n != 2 {
			t.Fatalf("member %s owns %v; want 2 partitions of t1", m.id, m.owned)
		}
	}
	h.checkReload()
	a, b := members[0], members[1]

	wantCodes := func(what string, r kmsg.Response, want *kerr.Error) {
		t.Helper()
		for _, c := range commitCodes(r) {
			wantCode(t, what, c, want)
		}
	}
	wantCodes("commit at the member epoch", h.resp(h.do(offsetCommitV9("g", a.id, a.epoch, "t1", 10, 11), "c")), nil)
	wantCodes("commit at a newer epoch", h.resp(h.do(offsetCommitV9("g", a.id, a.epoch+1, "t1", 12), "c")), kerr.StaleMemberEpoch)
	wantCodes("commit before v9", h.resp(h.do(commitReq("g", a.id, a.epoch, "t1", 12), "c")), kerr.UnsupportedVersion)
	wantCodes("admin commit into a group with members", h.resp(h.do(offsetCommitV9("g", "", -1, "t1", 12), "c")), kerr.UnknownMemberID)
	wantCodes("commit of an unknown member", h.resp(h.do(offsetCommitV9("g", "zz", 1, "t1", 12), "c")), kerr.UnknownMemberID)

	fetch := func(member *string, epoch int32) kmsg.OffsetFetchResponseGroup {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 9
		req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g", MemberID: member, MemberEpoch: epoch,
			Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t1", Partitions: []int32{0, 1}}}}}
		return h.resp(h.do(req, "c")).(*kmsg.OffsetFetchResponse).Groups[0]
	}
	if g := fetch(&b.id, b.epoch); g.ErrorCode != 0 || g.Topics[0].Partitions[1].Offset != 11 {
		t.Fatalf("fetch by a member: %+v", g)
	}
	wantCode(t, "fetch at a stale epoch", fetch(&b.id, b.epoch+1).ErrorCode, kerr.StaleMemberEpoch)
	wantCode(t, "fetch by an admin", fetch(nil, -1).ErrorCode, nil)

	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Version, d.Groups = 6, []string{"g"}
	if g := h.resp(h.do(d, "c")).(*kmsg.DescribeGroupsResponse).Groups[0]; g.ErrorCode != kerr.GroupIDNotFound.Code || g.State != "Dead" {
		t.Fatalf("DescribeGroups of a consumer-protocol group: %+v", g)
	}
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = []string{"g", "absent"}
	described := h.resp(h.do(cd, "c")).(*kmsg.ConsumerGroupDescribeResponse).Groups
	if g := described[0]; g.ErrorCode != 0 || g.State != "Stable" || len(g.Members) != 2 || g.AssignorName != "uniform" {
		t.Fatalf("ConsumerGroupDescribe: %+v", g)
	}
	wantCode(t, "ConsumerGroupDescribe of a missing group", described[1].ErrorCode, kerr.GroupIDNotFound)

	l := kmsg.NewPtrListGroupsRequest()
	l.Version = 5
	for _, tc := range []struct{ states, types, want []string }{
		{nil, nil, []string{"g consumer Stable consumer"}},
		{nil, []string{"Consumer"}, []string{"g consumer Stable consumer"}},
		{nil, []string{"classic"}, nil},
		{[]string{"stable"}, nil, []string{"g consumer Stable consumer"}},
		{[]string{"Reconciling"}, nil, nil},
	} {
		l.StatesFilter, l.TypesFilter = tc.states, tc.types
		var got []string
		for _, g := range h.resp(h.do(l, "c")).(*kmsg.ListGroupsResponse).Groups {
			got = append(got, g.Group+" "+g.ProtocolType+" "+g.GroupState+" "+g.GroupType)
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("ListGroups %v %v: %v, want %v", tc.states, tc.types, got, tc.want)
		}
	}

	del := &kmsg.DeleteGroupsRequest{Groups: []string{"g"}}
	wantCode(t, "delete with members", h.resp(h.do(del, "c")).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, kerr.NonEmptyGroup)
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group, od.Topics = "g", []kmsg.OffsetDeleteRequestTopic{{Topic: "t1", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	wantCode(t, "offset delete of a subscribed topic",
		h.resp(h.do(od, "c")).(*kmsg.OffsetDeleteResponse).Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)
	wantCode(t, "a classic join", h.joinResp(h.do(joinReq("g", "", nil), "c")).ErrorCode, kerr.MemberIDRequired)
	wantCode(t, "a classic heartbeat", h.resp(h.do(heartbeatReq("g", a.id, 1), "c")).(*kmsg.HeartbeatResponse).ErrorCode, kerr.UnknownMemberID)
	h.checkReload()

	wantCode(t, "a leaves", h.cgBeat(cgBeatReq("g", a.id, leaveEpoch, nil)).ErrorCode, nil)
	h.settle("g", []*cgClient{b})
	if n := len(b.owned[cgT1]); n != 4 {
		t.Fatalf("after a left, b owns %v", b.owned)
	}
	h.advance(h.c.opts.ConsumerSessionTimeout + time.Second)
	if g := h.c.groups["g"]; g == nil || g.consumer == nil || g.consumer.state() != consumerEmpty {
		t.Fatalf("after b's session ended, the group is %+v", g)
	}
	h.checkReload()
	wantCode(t, "b after its session ended", h.cgBeat(cgBeatReq("g", b.id, b.epoch, b.owned)).ErrorCode, kerr.UnknownMemberID)

	wantCode(t, "delete when empty", h.resp(h.do(del, "c")).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode, nil)
	if len(h.c.groups) != 0 {
		t.Fatalf("groups left after the delete: %v", slices.Collect(maps.Keys(h.c.groups)))
	}
	h.checkReload()
	if len(replayAll(t, testOptions(), h.records).groups) != 0 {
		t.Fatal("the deleted group comes back on reload")
	}
}

// A join converts an empty classic group, keeping its offsets; without
// online migration, a classic group with members is not a consumer group;
// a classic join converts an empty consumer group back, offsets kept
// again.
func TestGroupConvertsBetweenProtocolsWhenEmpty(t *testing.T) {
	opts := testOptions()
	opts.MigrationPolicy = MigrationDisabled
	h := newHarness(t, opts)
	wantCode(t, "simple commit", commitCodes(h.resp(h.do(commitReq("g", "", -1, "t1", 5), "c")))[0], nil)
	h.stableGroup("busy", 1)

	wantCode(t, "join of a classic group with members", h.cgBeat(cgJoinReq("busy", "a", "t1")).ErrorCode, kerr.GroupIDNotFound)
	resp := h.cgBeat(cgJoinReq("g", "a", "t1"))
	wantCode(t, "join of an empty classic group", resp.ErrorCode, nil)
	if g := h.c.groups["g"]; g.consumer == nil || g.offsets[tpOf("t1", 0)].offset != 5 {
		t.Fatalf("converted group %+v", g)
	}
	h.checkReload()

	wantCode(t, "a leaves", h.cgBeat(cgBeatReq("g", "a", leaveEpoch, nil)).ErrorCode, nil)
	tok := h.do(joinReq("g", "", nil), "c")
	wantCode(t, "classic join of the empty consumer group", h.joinResp(tok).ErrorCode, kerr.MemberIDRequired)
	if g := h.c.groups["g"]; g.consumer != nil || g.offsets[tpOf("t1", 0)].offset != 5 {
		t.Fatalf("group converted back %+v", g)
	}
	h.checkReload()
}

func TestConsumerGroupHeartbeatRefusals(t *testing.T) {
	h := newHarness(t, testOptions())
	for _, tc := range []struct {
		name string
		req  *kmsg.ConsumerGroupHeartbeatRequest
		want *kerr.Error
	}{
		{"a heartbeat to a missing group", cgBeatReq("g", "a", 3, nil), kerr.GroupIDNotFound},
		{"a leave of a missing group", cgBeatReq("g", "a", leaveEpoch, nil), kerr.GroupIDNotFound},
		{"no group id", cgJoinReq("", "a", "t1"), kerr.InvalidRequest},
		{"an unknown assignor", func() *kmsg.ConsumerGroupHeartbeatRequest {
			r := cgJoinReq("g", "a", "t1")
			r.ServerAssignor = kmsg.StringPtr("sticky")
			return r
		}(), kerr.UnsupportedAssignor},
	} {
		resp := h.cgBeat(tc.req)
		wantCode(t, tc.name, resp.ErrorCode, tc.want)
		if resp.ErrorMessage == nil {
			t.Fatalf("%s: no error message", tc.name)
		}
	}
	if len(h.c.groups) != 0 || len(h.records) != 0 {
		t.Fatalf("refusals left groups %v and %d records", slices.Collect(maps.Keys(h.c.groups)), len(h.records))
	}
}

// A v0 member is named by the coordinator, with Kafka's form of a UUID.
func TestConsumerGroupHeartbeatV0NamesTheMember(t *testing.T) {
	h := newHarness(t, testOptions())
	req := cgJoinReq("g", "", "t1")
	req.Version = 0
	resp := h.cgBeat(req)
	if resp.ErrorCode != 0 || resp.MemberID == nil || len(*resp.MemberID) != 22 {
		t.Fatalf("v0 join: %+v", resp)
	}
}

// An empty consumer group's offsets expire a retention period after
// their commit, and the group with them.
func TestEmptyConsumerGroupExpires(t *testing.T) {
	h := newHarness(t, testOptions())
	members := h.stableConsumerGroup("g", 1)
	a := members[0]
	wantCode(t, "commit", commitCodes(h.resp(h.do(offsetCommitV9("g", a.id, a.epoch, "t1", 7), "c")))[0], nil)
	wantCode(t, "leave", h.cgBeat(cgBeatReq("g", a.id, leaveEpoch, nil)).ErrorCode, nil)
	h.advance(time.Second) // arms the expiry check
	h.advance(h.c.opts.OffsetsRetention - 2*time.Second)
	if len(h.c.groups) != 1 {
		t.Fatal("the group went before its offsets expired")
	}
	h.advance(h.c.opts.OffsetsRetentionCheckInterval)
	if len(h.c.groups) != 0 {
		t.Fatalf("groups after expiry: %v", slices.Collect(maps.Keys(h.c.groups)))
	}
	h.checkReload()
}

// A consumer group record for a classic group with members, or classic
// metadata for a consumer group, is a broken log.
func TestReplayRefusesMixedProtocols(t *testing.T) {
	h := newHarness(t, testOptions())
	h.stableGroup("classic", 1)
	h.stableConsumerGroup("consumer", 1)
	var classicMeta, consumerMeta runtime.Record
	for _, r := range h.records {
		k, err := readConsumerKey(r.Key)
		switch {
		case err == nil && k.Type == consumerGroupMetadataKeyType:
			consumerMeta = r
		case err != nil && r.Value != nil:
			if _, gkey, err := readKey(r.Key); err == nil && gkey != nil {
				classicMeta = r
			}
		}
	}
	for _, extra := range []runtime.Record{
		{Key: consumerGroupMetadataKey("classic"), Value: consumerMeta.Value},
		{Key: groupKey("consumer"), Value: classicMeta.Value},
	} {
		c := replayAll(t, testOptions(), h.records)
		if err := c.Replay(extra.Key, extra.Value); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("replay of %x: %v, want ErrBadRecord", extra.Key, err)
		}
	}
}

// The group follows its topics: partitions added to a subscribed topic
// are assigned at the next heartbeat, and a deleted topic's partitions
// are revoked.
func TestConsumerGroupFollowsTopicChanges(t *testing.T) {
	topics := viewOf(map[string]int32{"t1": 2, "t2": 2})
	opts := testOptions()
	opts.Topics = func() TopicsView { return topics }
	h := newHarness(t, opts)
	resp := h.cgBeat(cgJoinReq("g", "a", "t1", "t2"))
	a := &cgClient{id: "a", epoch: resp.MemberEpoch, owned: assigned(resp)}
	h.settle("g", []*cgClient{a})
	if !a.owned.Equal(assignor.Assignment{cgT1: {0, 1}, cgT2: {0, 1}}) {
		t.Fatalf("a owns %v", a.owned)
	}

	topics = viewOf(map[string]int32{"t1": 4, "t2": 2})
	h.settle("g", []*cgClient{a})
	if !a.owned.Equal(assignor.Assignment{cgT1: {0, 1, 2, 3}, cgT2: {0, 1}}) {
		t.Fatalf("after t1 grew to 4 partitions, a owns %v", a.owned)
	}
	topics = viewOf(map[string]int32{"t1": 4})
	h.settle("g", []*cgClient{a})
	if !a.owned.Equal(assignor.Assignment{cgT1: {0, 1, 2, 3}}) {
		t.Fatalf("after t2 was deleted, a owns %v", a.owned)
	}
	h.checkReload()
}

// A group's own configs (consumer.session.timeout.ms,
// consumer.heartbeat.interval.ms) replace the broker's for it alone.
func TestConsumerGroupOwnSettings(t *testing.T) {
	opts := testOptions()
	opts.ConsumerGroupSettings = func(group string) (time.Duration, time.Duration, bool) {
		if group == "own" {
			return time.Minute, 7 * time.Second, true
		}
		return 0, 0, false
	}
	h := newHarness(t, opts)
	own, plain := h.cgBeat(cgJoinReq("own", "a", "t1")), h.cgBeat(cgJoinReq("plain", "a", "t1"))
	if own.HeartbeatIntervalMillis != 7000 || plain.HeartbeatIntervalMillis != int32(opts.ConsumerHeartbeatInterval.Milliseconds()) {
		t.Fatalf("heartbeat intervals %d and %d", own.HeartbeatIntervalMillis, plain.HeartbeatIntervalMillis)
	}
	h.advance(opts.ConsumerSessionTimeout + time.Second)
	if n := len(h.c.groups["plain"].consumer.members); n != 0 {
		t.Fatalf("plain group keeps %d members past the broker's session timeout", n)
	}
	if n := len(h.c.groups["own"].consumer.members); n != 1 {
		t.Fatalf("the group with a minute's session lost its member after %v", opts.ConsumerSessionTimeout)
	}
	h.advance(time.Minute - opts.ConsumerSessionTimeout)
	if n := len(h.c.groups["own"].consumer.members); n != 0 {
		t.Fatalf("the group with a minute's session keeps %d members past it", n)
	}
}

// The offered server assignors decide what a member may name and what a
// group uses by default.
func TestConsumerAssignorsOffered(t *testing.T) {
	opts := testOptions()
	for _, bad := range [][]string{nil, {"sticky"}} {
		opts.ConsumerAssignors = bad
		if _, err := New(opts); err == nil {
			t.Fatalf("assignors %v accepted", bad)
		}
	}
	opts.ConsumerAssignors = []string{"range"}
	h := newHarness(t, opts)
	req := cgJoinReq("g", "a", "t1")
	req.ServerAssignor = kmsg.StringPtr("uniform")
	wantCode(t, "a member naming an assignor not offered", h.cgBeat(req).ErrorCode, kerr.UnsupportedAssignor)
	wantCode(t, "a member naming none", h.cgBeat(cgJoinReq("g", "a", "t1")).ErrorCode, nil)
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = []string{"g"}
	if g := h.resp(h.do(cd, "c")).(*kmsg.ConsumerGroupDescribeResponse).Groups[0]; g.AssignorName != "range" {
		t.Fatalf("the group uses %q, want the only one offered, range", g.AssignorName)
	}
}
