package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

func shareBeatReq(group, member string, epoch int32, topics ...string) *kmsg.ShareGroupHeartbeatRequest {
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version, req.GroupID, req.MemberID, req.MemberEpoch = 1, group, member, epoch
	if topics != nil {
		req.SubscribedTopicNames = topics
	}
	return req
}

func (h *harness) shareBeat(req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	h.tb.Helper()
	return h.resp(h.do(req, "client")).(*kmsg.ShareGroupHeartbeatResponse)
}

// shareClient is what a share group client knows of itself.
type shareClient struct {
	id       string
	epoch    int32
	assigned assignor.Assignment
}

// beatShare heartbeats m without a subscription, takes the answer in and
// returns it.
func (h *harness) beatShare(group string, m *shareClient) *kmsg.ShareGroupHeartbeatResponse {
	h.tb.Helper()
	return h.takeShare(m, h.shareBeat(shareBeatReq(group, m.id, m.epoch)))
}

// takeShare takes a heartbeat's answer into m.
func (h *harness) takeShare(m *shareClient, resp *kmsg.ShareGroupHeartbeatResponse) *kmsg.ShareGroupHeartbeatResponse {
	h.tb.Helper()
	wantCode(h.tb, "share heartbeat of "+m.id, resp.ErrorCode, nil)
	m.epoch = resp.MemberEpoch
	if resp.Assignment != nil {
		m.assigned = assignor.Assignment{}
		for _, tp := range resp.Assignment.TopicPartitions {
			m.assigned[tp.TopicID] = tp.Partitions
		}
	}
	return resp
}

func (h *harness) joinShare(group, id string, topics ...string) *shareClient {
	h.tb.Helper()
	m := &shareClient{id: id}
	resp := h.shareBeat(shareBeatReq(group, id, 0, topics...))
	wantCode(h.tb, "share join of "+id, resp.ErrorCode, nil)
	if resp.Assignment == nil || resp.MemberID == nil || *resp.MemberID != id {
		h.tb.Fatalf("share join of %s: %+v", id, resp)
	}
	m.epoch = resp.MemberEpoch
	m.assigned = assignor.Assignment{}
	for _, tp := range resp.Assignment.TopicPartitions {
		m.assigned[tp.TopicID] = tp.Partitions
	}
	return m
}

// Members of a share group join, split t1, share t2 when they outnumber its
// partitions, and take their new targets at their own next heartbeat; the
// group shows in ListGroups and ShareGroupDescribe, refuses the requests of
// the other group types, loses a member that leaves and one whose session
// ends, and is deleted once empty. The records reload to the same state at
// every step.
func TestShareGroupThroughTheCoordinator(t *testing.T) {
	h := newHarness(t, testOptions())
	a := h.joinShare("g", "a", "t1")
	if a.epoch != 1 || len(a.assigned[cgT1]) != 4 {
		t.Fatalf("first member: epoch %d assigned %v", a.epoch, a.assigned)
	}
	h.checkReload()
	b := h.joinShare("g", "b", "t1")
	if b.epoch != 2 || len(b.assigned[cgT1]) != 2 {
		t.Fatalf("second member: epoch %d assigned %v", b.epoch, b.assigned)
	}
	if resp := h.beatShare("g", a); a.epoch != 2 || resp.Assignment == nil || len(a.assigned[cgT1]) != 2 {
		t.Fatalf("first member after the second joined: epoch %d assigned %v", a.epoch, a.assigned)
	}
	if resp := h.beatShare("g", a); resp.Assignment != nil {
		t.Fatalf("an unchanged heartbeat carries an assignment: %+v", resp.Assignment)
	}
	h.checkReload()

	// Three members on a topic of two partitions: each partition shared.
	c := h.joinShare("g", "c", "t2")
	h.takeShare(a, h.shareBeat(shareBeatReq("g", "a", a.epoch, "t1", "t2")))
	h.takeShare(b, h.shareBeat(shareBeatReq("g", "b", b.epoch, "t1", "t2")))
	for _, m := range []*shareClient{a, b, c} {
		h.beatShare("g", m)
	}
	holders := map[int32]int{}
	for _, m := range []*shareClient{a, b, c} {
		for _, p := range m.assigned[cgT2] {
			holders[p]++
		}
	}
	// a and b spread t1 and t2 between them, c reads t2 alone.
	if holders[0] != 2 || holders[1] != 2 || len(c.assigned[cgT2]) != 2 {
		t.Fatalf("t2 holders %v", holders)
	}
	h.checkReload()

	list := h.resp(h.do(&kmsg.ListGroupsRequest{Version: 5}, "admin")).(*kmsg.ListGroupsResponse)
	if len(list.Groups) != 1 || list.Groups[0].GroupType != "share" || list.Groups[0].GroupState != "Stable" || list.Groups[0].ProtocolType != "share" {
		t.Fatalf("ListGroups %+v", list.Groups)
	}
	desc := h.resp(h.do(&kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{"g", "nope"}}, "admin")).(*kmsg.ShareGroupDescribeResponse)
	if d := desc.Groups[0]; d.ErrorCode != 0 || len(d.Members) != 3 || d.Assignor != "simple" || d.GroupEpoch != c.epoch || d.Members[2].SubscribedTopicNames[0] != "t2" {
		t.Fatalf("ShareGroupDescribe %+v", d)
	}
	wantCode(t, "describe of a missing group", desc.Groups[1].ErrorCode, kerr.GroupIDNotFound)

	// The other group types' requests on a share group id.
	join := h.resp(h.do(&kmsg.JoinGroupRequest{Group: "g", ProtocolType: "consumer", SessionTimeoutMillis: 10000, RebalanceTimeoutMillis: 10000,
		Protocols: []kmsg.JoinGroupRequestProtocol{{Name: "range"}}}, "classic")).(*kmsg.JoinGroupResponse)
	wantCode(t, "JoinGroup", join.ErrorCode, kerr.InconsistentGroupProtocol)
	commit := h.resp(h.do(commitReq("g", "", -1, "t1", 5), "classic")).(*kmsg.OffsetCommitResponse)
	wantCode(t, "OffsetCommit", commit.Topics[0].Partitions[0].ErrorCode, kerr.GroupIDNotFound)
	cgResp := h.cgBeat(cgJoinReq("g", "x", "t1"))
	wantCode(t, "ConsumerGroupHeartbeat", cgResp.ErrorCode, kerr.GroupIDNotFound)
	del := h.resp(h.do(&kmsg.DeleteGroupsRequest{Groups: []string{"g"}}, "admin")).(*kmsg.DeleteGroupsResponse)
	wantCode(t, "DeleteGroups of a share group with members", del.Groups[0].ErrorCode, kerr.NonEmptyGroup)

	// A leave and a session end.
	leave := h.shareBeat(shareBeatReq("g", "a", -1))
	if leave.ErrorCode != 0 || leave.MemberEpoch != -1 {
		t.Fatalf("leave %+v", leave)
	}
	h.checkReload()
	h.advance(testOptions().ShareSessionTimeout / 2)
	h.beatShare("g", b)
	h.advance(testOptions().ShareSessionTimeout/2 + time.Millisecond)
	if _, ok := h.c.shares["g"].members["c"]; ok {
		t.Fatal("c's session did not end")
	}
	if len(b.assigned[cgT1]) != 4 || len(b.assigned[cgT2]) != 2 {
		t.Fatalf("b alone in its pool after a left: %v", b.assigned)
	}
	if resp := h.beatShare("g", b); resp.Assignment != nil || b.epoch != h.c.shares["g"].epoch {
		t.Fatalf("b after c's session ended: %+v, epoch %d", resp, b.epoch)
	}
	h.checkReload()
	h.shareBeat(shareBeatReq("g", "b", -1))
	del = h.resp(h.do(&kmsg.DeleteGroupsRequest{Groups: []string{"g"}}, "admin")).(*kmsg.DeleteGroupsResponse)
	wantCode(t, "DeleteGroups of an empty share group", del.Groups[0].ErrorCode, nil)
	if len(h.c.shares) != 0 {
		t.Fatal("the share group is still there")
	}
	// Its share-partitions' state is to be deleted: every partition of t1
	// and t2 was assigned.
	if len(h.effects) != 1 || fmt.Sprint(h.effects[0]) != fmt.Sprint(DeleteShareState{Group: "g", Topics: map[base.TopicID][]int32{cgT1: {0, 1, 2, 3}, cgT2: {0, 1}}}) {
		t.Fatalf("effects of the deletion: %v", h.effects)
	}
	h.checkReload()
	// The id is free for a classic group again.
	join = h.resp(h.do(&kmsg.JoinGroupRequest{Group: "g", ProtocolType: "consumer", SessionTimeoutMillis: 10000, RebalanceTimeoutMillis: 10000,
		Protocols: []kmsg.JoinGroupRequestProtocol{{Name: "range"}}}, "classic")).(*kmsg.JoinGroupResponse)
	if join.ErrorCode == kerr.InconsistentGroupProtocol.Code {
		t.Fatal("the deleted share group still holds its id")
	}
}

func TestShareGroupHeartbeatRefusals(t *testing.T) {
	h := newHarness(t, testOptions())
	h.joinShare("g", "a", "t1")
	h.resp(h.do(&kmsg.JoinGroupRequest{Group: "classic", ProtocolType: "consumer", SessionTimeoutMillis: 10000, RebalanceTimeoutMillis: 10000,
		Protocols: []kmsg.JoinGroupRequestProtocol{{Name: "range"}}}, "classic"))
	long := "0123456789012345678901234567890123456789"
	tests := []struct {
		name string
		req  *kmsg.ShareGroupHeartbeatRequest
		want *kerr.Error
	}{
		{"empty member id", shareBeatReq("g", " ", 0, "t1"), kerr.InvalidRequest},
		{"member id too long", shareBeatReq("g", long, 0, "t1"), kerr.InvalidRequest},
		{"empty group id", shareBeatReq("", "a", 0, "t1"), kerr.InvalidRequest},
		{"join without topics", shareBeatReq("g", "n", 0), kerr.InvalidRequest},
		{"epoch below -1", shareBeatReq("g", "a", -2), kerr.InvalidRequest},
		{"a classic group's id", shareBeatReq("classic", "n", 0, "t1"), kerr.GroupIDNotFound},
		{"heartbeat of a missing group", shareBeatReq("missing", "n", 1), kerr.GroupIDNotFound},
		{"unknown member", shareBeatReq("g", "n", 1), kerr.UnknownMemberID},
		{"epoch ahead", shareBeatReq("g", "a", 9), kerr.FencedMemberEpoch},
		{"leave of an unknown member", shareBeatReq("g", "n", -1), kerr.UnknownMemberID},
	}
	for _, tt := range tests {
		resp := h.shareBeat(tt.req)
		wantCode(t, tt.name, resp.ErrorCode, tt.want)
		if resp.ErrorMessage == nil || *resp.ErrorMessage == "" {
			t.Errorf("%s: no error message", tt.name)
		}
	}
	// A known member at epoch 0 rejoins without being fenced, and gets its
	// assignment again.
	if resp := h.shareBeat(shareBeatReq("g", "a", 0, "t1")); resp.ErrorCode != 0 || resp.Assignment == nil || resp.MemberEpoch != 1 {
		t.Fatalf("rejoin %+v", resp)
	}
	h.checkReload()
}

func TestShareGroupMaxSize(t *testing.T) {
	o := testOptions()
	o.ShareMaxSize = 1
	h := newHarness(t, o)
	h.joinShare("g", "a", "t1")
	wantCode(t, "second member", h.shareBeat(shareBeatReq("g", "b", 0, "t1")).ErrorCode, kerr.GroupMaxSizeReached)
	if resp := h.shareBeat(shareBeatReq("g", "a", 1)); resp.ErrorCode != 0 {
		t.Fatalf("the member in the full group: %+v", resp)
	}
}

// A share group's previous epoch is accepted (its last response was lost),
// an older one is not.
func TestShareGroupPreviousEpoch(t *testing.T) {
	h := newHarness(t, testOptions())
	a := h.joinShare("g", "a", "t1")
	h.joinShare("g", "b", "t1")
	h.beatShare("g", a) // a moves from 1 to 2
	if resp := h.shareBeat(shareBeatReq("g", "a", 1)); resp.ErrorCode != 0 || resp.MemberEpoch != 2 {
		t.Fatalf("heartbeat at the previous epoch: %+v", resp)
	}
	h.joinShare("g", "c", "t1")
	h.beatShare("g", a) // 2 to 3
	wantCode(t, "heartbeat two epochs behind", h.shareBeat(shareBeatReq("g", "a", 1)).ErrorCode, kerr.FencedMemberEpoch)
}

func alterShareReq(group, topic string, partitions ...int32) *kmsg.AlterShareGroupOffsetsRequest {
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID = group
	rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
		rp.Partition, rp.StartOffset = p, 5
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// describedShareOffsets is what DescribeShareGroupOffsets without topics
// lists for group: "topic:partitions".
func (h *harness) describedShareOffsets(group string) string {
	h.tb.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Version = 1
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	req.Groups = append(req.Groups, rg)
	resp := h.resp(h.do(req, "admin")).(*kmsg.DescribeShareGroupOffsetsResponse)
	out := ""
	for _, t := range resp.Groups[0].Topics {
		var ps []int32
		for _, p := range t.Partitions {
			if p.StartOffset != -1 || p.Lag != -1 {
				h.tb.Fatalf("the coordinator filled in %+v", p)
			}
			ps = append(ps, p.Partition)
		}
		out += fmt.Sprintf("%s:%v ", t.Topic, ps)
	}
	return out
}

// The share group offset APIs through the coordinator: Describe lists the
// partitions a group has state for; Alter and Delete are for empty share
// groups only, Alter creating the group, and record what they may change.
func TestShareGroupOffsetsThroughTheCoordinator(t *testing.T) {
	h := newHarness(t, testOptions())
	h.joinShare("g", "a", "t1")
	if got := h.describedShareOffsets("g"); got != "t1:[0 1 2 3] " {
		t.Fatalf("described %q", got)
	}
	if got := h.describedShareOffsets("missing"); got != "" {
		t.Fatalf("described a missing group: %q", got)
	}
	alter := h.resp(h.do(alterShareReq("g", "t1", 0), "admin")).(*kmsg.AlterShareGroupOffsetsResponse)
	wantCode(t, "alter of a group with members", alter.ErrorCode, kerr.NonEmptyGroup)
	h.resp(h.do(&kmsg.JoinGroupRequest{Group: "classic", ProtocolType: "consumer", SessionTimeoutMillis: 10000, RebalanceTimeoutMillis: 10000,
		Protocols: []kmsg.JoinGroupRequestProtocol{{Name: "range"}}}, "classic"))
	alter = h.resp(h.do(alterShareReq("classic", "t1", 0), "admin")).(*kmsg.AlterShareGroupOffsetsResponse)
	wantCode(t, "alter of a classic group", alter.ErrorCode, kerr.GroupIDNotFound)

	alter = h.resp(h.do(alterShareReq("n", "t1", 0, 9), "admin")).(*kmsg.AlterShareGroupOffsetsResponse)
	wantCode(t, "alter of a new group", alter.ErrorCode, nil)
	wantCode(t, "alter of an existing partition", alter.Topics[0].Partitions[0].ErrorCode, nil)
	wantCode(t, "alter of a partition past the topic's", alter.Topics[0].Partitions[1].ErrorCode, kerr.UnknownTopicOrPartition)
	if alter.Topics[0].TopicID != cgT1 {
		t.Fatalf("altered topic id %x", alter.Topics[0].TopicID)
	}
	alter = h.resp(h.do(alterShareReq("n", "nope", 0), "admin")).(*kmsg.AlterShareGroupOffsetsResponse)
	wantCode(t, "alter of a missing topic", alter.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	if got := h.describedShareOffsets("n"); got != "t1:[0] " {
		t.Fatalf("described after the alter %q", got)
	}
	list := h.resp(h.do(&kmsg.ListGroupsRequest{Version: 5, TypesFilter: []string{"share"}}, "admin")).(*kmsg.ListGroupsResponse)
	if len(list.Groups) != 2 {
		t.Fatalf("share groups listed: %+v", list.Groups)
	}
	h.checkReload()

	del := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	del.GroupID = "n"
	for _, topic := range []string{"t2", "t1", "nope"} {
		rt := kmsg.NewDeleteShareGroupOffsetsRequestTopic()
		rt.Topic = topic
		del.Topics = append(del.Topics, rt)
	}
	delResp := h.resp(h.do(del, "admin")).(*kmsg.DeleteShareGroupOffsetsResponse)
	wantCode(t, "delete of a topic without state", delResp.Topics[0].ErrorCode, kerr.UnknownTopicOrPartition)
	wantCode(t, "delete of a topic with state", delResp.Topics[1].ErrorCode, nil)
	wantCode(t, "delete of a missing topic", delResp.Topics[2].ErrorCode, kerr.UnknownTopicOrPartition)
	if got := h.describedShareOffsets("n"); got != "" {
		t.Fatalf("described after the delete %q", got)
	}
	del.GroupID = "missing"
	wantCode(t, "delete in a missing group", h.resp(h.do(del, "admin")).(*kmsg.DeleteShareGroupOffsetsResponse).ErrorCode, kerr.GroupIDNotFound)
	h.checkReload()
}
