package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests of offset commit validation, OffsetDelete and retention at their
// boundaries, each checked against Kafka's OffsetMetadataManager and
// ClassicGroup.validateOffsetCommit.

func TestOffsetCommitValidationEdges(t *testing.T) {
	inst := kmsg.StringPtr("i")
	h := newHarness(t, testOptions())
	_, static, gen := h.staticGroup("g", inst)
	withInstance := func(member string, gen int32) *kmsg.OffsetCommitRequest {
		req := commitReq("g", member, gen, "t", 1)
		req.Version = 9
		req.InstanceID = inst
		return req
	}
	v9 := commitReq("nope", "m", 3, "t", 1)
	v9.Version = 9
	for _, tc := range []struct {
		name string
		req  *kmsg.OffsetCommitRequest
		want *kerr.Error
	}{
		// v9 (KIP-848) says GROUP_ID_NOT_FOUND; older versions keep
		// ILLEGAL_GENERATION. Generation 0 is a generation.
		{"unknown group with a generation, v9", v9, kerr.GroupIDNotFound},
		{"unknown group at generation 0", commitReq("nope", "m", 0, "t", 1), kerr.IllegalGeneration},
		// An instance id alone identifies the committer: it must be the
		// member the instance id maps to.
		{"instance id without member id or generation", withInstance("", -1), kerr.FencedInstanceID},
		{"instance id of another member", withInstance("x", gen), kerr.FencedInstanceID},
		{"static member", withInstance(static, gen), nil},
	} {
		for _, c := range commitCodes(h.resp(h.do(tc.req, "c"))) {
			wantCode(t, tc.name, c, tc.want)
		}
	}
	if _, ok := h.c.groups["nope"]; ok {
		t.Fatal("a refused commit created a group")
	}
}

// Metadata of exactly OffsetMetadataMaxBytes is accepted; one byte more is
// OFFSET_METADATA_TOO_LARGE (Kafka: length > offset.metadata.max.bytes),
// for plain and transactional commits alike.
func TestOffsetMetadataAtItsLimit(t *testing.T) {
	opts := testOptions()
	opts.OffsetMetadataMaxBytes = 4
	h := newHarness(t, opts)
	for _, tc := range []struct {
		metadata string
		want     *kerr.Error
	}{
		{"four", nil},
		{"fives", kerr.OffsetMetadataTooLarge},
	} {
		req := commitReq("s", "", -1, "t", 5)
		req.Topics[0].Partitions[0].Metadata = kmsg.StringPtr(tc.metadata)
		wantCode(t, "commit of "+tc.metadata, commitCodes(h.resp(h.do(req, "c")))[0], tc.want)
		txn := txnCommitReq("s", 1, 0, "t", 5)
		txn.Topics[0].Partitions[0].Metadata = kmsg.StringPtr(tc.metadata)
		h.txnCommit(txn, tc.want)
	}
}

// OffsetDelete on a group with members is NON_EMPTY_GROUP unless the group
// is a consumer group, whose offsets of topics it does not subscribe to may
// go (Kafka's ClassicGroup.validateOffsetDelete).
func TestOffsetDeleteOfAGroupWithMembers(t *testing.T) {
	for _, tc := range []struct {
		name         string
		protocolType string
		want         *kerr.Error
	}{
		{"consumer group", consumerProtocolType, nil},
		{"connect group", "connect", kerr.NonEmptyGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testOptions())
			req := joinReq("g", "", nil)
			req.ProtocolType = tc.protocolType
			h.joinedWithOldOffset(req)
			wantCode(t, "offset delete", h.deleteOldOffset().ErrorCode, tc.want)
			if _, kept := h.c.groups["g"].offsets[tpOf("old", 0)]; kept != (tc.want != nil) {
				t.Fatalf("offset kept %v", kept)
			}
		})
	}
}

// A consumer group whose subscriptions cannot be read counts as subscribed
// to every topic (Kafka's isSubscribedToTopic): OffsetDelete refuses with
// GROUP_SUBSCRIBED_TO_TOPIC.
func TestOffsetDeleteWithUnreadableSubscriptions(t *testing.T) {
	h := newHarness(t, testOptions())
	req := joinReq("g", "", nil)
	req.Protocols[0].Metadata = []byte{0xff}
	h.joinedWithOldOffset(req)
	resp := h.deleteOldOffset()
	wantCode(t, "offset delete", resp.Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)
}

// An offset expires when exactly the retention has passed (Kafka:
// now - base >= offsets.retention.ms).
func TestOffsetExpiresAtTheRetention(t *testing.T) {
	h := newHarness(t, retentionOptions())
	h.do(commitReq("simple", "", -1, "t", 9), "c")
	h.advance(time.Minute) // arms the expiry scan
	h.advance(58 * time.Minute)
	if _, ok := h.c.groups["simple"]; !ok {
		t.Fatal("the offset expired before the retention")
	}
	h.advance(time.Minute)
	if _, ok := h.c.groups["simple"]; ok {
		t.Fatal("the offset outlived the retention")
	}
}

// A consumer group's offsets of topics it no longer subscribes to expire
// only while it is Stable (Kafka's offsetExpirationCondition): during a
// rebalance the subscriptions are changing.
func TestUnsubscribedOffsetsDoNotExpireDuringARebalance(t *testing.T) {
	h := newHarness(t, retentionOptions())
	ids, gen := h.stableGroup("g", 2) // subscribed to "t"
	h.do(commitReq("g", ids[0], gen, "old", 1), "c")
	h.heartbeatFor(55*time.Minute, "g", gen, ids...)
	slow := joinReq("g", ids[0], nil)
	slow.RebalanceTimeoutMillis = int32(15 * time.Minute / time.Millisecond)
	h.do(slow, "c")
	h.heartbeatFor(10*time.Minute, "g", gen, ids[1])
	g := h.c.groups["g"]
	if g.state != statePreparingRebalance {
		t.Fatalf("state %v, want the rebalance still under way", g.state)
	}
	if _, ok := g.offsets[tpOf("old", 0)]; !ok {
		t.Fatal("an offset expired while its group was rebalancing")
	}
}

// An Empty group's offsets expire a retention after it became Empty, and a
// reload keeps that time (GroupMetadataValue.CurrentStateTimestamp): the
// offsets of a long-lived group that just emptied do not go at the first
// check after a restart.
func TestEmptyGroupRetentionSurvivesAReload(t *testing.T) {
	h := newHarness(t, retentionOptions())
	ids, gen := h.stableGroup("g", 1)
	h.do(commitReq("g", ids[0], gen, "t", 5), "c")
	h.heartbeatFor(2*time.Hour, "g", gen, ids[0])
	h.resp(h.do(leaveReqV5("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]}), "c"))
	emptied := h.now

	h2 := newHarness(t, retentionOptions())
	h2.c = replayAll(t, retentionOptions(), h.records)
	h2.now = emptied
	h2.advance(time.Minute) // arms the expiry scan
	h2.advance(58 * time.Minute)
	if g := h2.c.groups["g"]; g == nil || len(g.offsets) != 1 {
		t.Fatal("a reloaded Empty group's offsets expired before the retention since it emptied")
	}
	h2.advance(2 * time.Minute)
	if _, ok := h2.c.groups["g"]; ok {
		t.Fatal("a reloaded Empty group outlived its retention")
	}
}

// What a reload reads of a group's metadata: a tombstone of the classic
// metadata (the group converted to the consumer protocol) keeps the
// group's committed and pending offsets; a loaded consumer group knows its
// members' subscriptions again; a leader that is not among the members is
// not taken.
func TestReplayOfGroupMetadata(t *testing.T) {
	t.Run("tombstone of a converted group keeps its offsets", func(t *testing.T) {
		h := newHarness(t, testOptions())
		ids, gen := h.stableGroup("g", 1)
		h.do(commitReq("g", ids[0], gen, "t1", 5), "c")
		h.txnCommit(txnCommitReq("g", 7, 0, "t1", 1, 9), nil)
		h.resp(h.do(leaveReqV5("g", kmsg.LeaveGroupRequestMember{MemberID: ids[0]}), "c"))
		wantCode(t, "consumer-protocol join", h.cgBeat(cgJoinReq("g", "a", "t1")).ErrorCode, nil)
		g := replayAll(t, testOptions(), h.records).groups["g"]
		if g == nil || g.offsets[tpOf("t1", 0)].offset != 5 || g.txnOffsets[7][tpOf("t1", 1)].offset != 9 {
			t.Fatalf("reloaded group %+v", g)
		}
		h.checkReload()
	})
	t.Run("subscriptions", func(t *testing.T) {
		h := newHarness(t, testOptions())
		ids, gen := h.stableGroup("g", 1) // subscribed to "t"
		h.do(commitReq("g", ids[0], gen, "old", 1), "c")
		h.c = replayAll(t, testOptions(), h.records)
		del := kmsg.NewPtrOffsetDeleteRequest()
		del.Group = "g"
		del.Topics = []kmsg.OffsetDeleteRequestTopic{
			{Topic: "old", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
			{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
		}
		resp := h.resp(h.do(del, "c")).(*kmsg.OffsetDeleteResponse)
		wantCode(t, "unsubscribed topic", resp.Topics[0].Partitions[0].ErrorCode, nil)
		wantCode(t, "subscribed topic", resp.Topics[1].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)
	})
	t.Run("leader not a member", func(t *testing.T) {
		g := newGroup("g", t0)
		g.protocolType, g.protocol, g.generation = consumerProtocolType, "range", 4
		g.addMember(&member{id: "m1", protocols: []protocol{{name: "range", metadata: consumerMeta("t")}}}, consumerProtocolType)
		v := metadataValue(g)
		v.Leader = kmsg.StringPtr("ghost")
		c, _ := New(testOptions())
		if err := c.Replay(groupKey("g"), v.AppendTo(nil)); err != nil {
			t.Fatal(err)
		}
		if got := c.groups["g"].leader; got != "m1" {
			t.Fatalf("leader %q, want the member m1", got)
		}
		checkInvariants(t, c)
	})
}

// joinedWithOldOffset joins req's new member to group g (v3: no
// MEMBER_ID_REQUIRED), syncs it and commits offset 1 of old-0.
func (h *harness) joinedWithOldOffset(req *kmsg.JoinGroupRequest) {
	req.Version = 3
	r := h.joinResp(h.do(req, "c"))
	h.syncResp(h.do(syncReq("g", r.MemberID, r.Generation, nil), "c"))
	h.do(commitReq("g", r.MemberID, r.Generation, "old", 1), "c")
}

// deleteOldOffset asks group g to delete its offset of old-0.
func (h *harness) deleteOldOffset() *kmsg.OffsetDeleteResponse {
	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "g"
	del.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "old", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	return h.resp(h.do(del, "c")).(*kmsg.OffsetDeleteResponse)
}
