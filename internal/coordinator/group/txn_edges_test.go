package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A producer is forgotten producer.id.expiration.ms after its last write
// here, whichever it was: an offset batch or a marker (Kafka's
// ProducerStateManager keeps the timestamp of the last batch).
func TestProducerExpiresAfterItsLastWrite(t *testing.T) {
	opts := testOptions()
	opts.ProducerIDExpiration = time.Hour
	h := newHarness(t, opts)
	h.txnCommit(txnCommitReq("g", 1, 5, "t", 10), nil)
	h.txnCommit(txnCommitReq("g", 2, 5, "u", 10), nil)
	// Producer 2's pending offset goes with its partition, without a
	// marker: its last write is the commit.
	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "g"
	del.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "u", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	wantCode(t, "offset delete", h.resp(h.do(del, "c")).(*kmsg.OffsetDeleteResponse).ErrorCode, nil)
	h.advance(30 * time.Minute)
	if err := h.event(ended(1, 5, true)); err != nil { // producer 1 writes last now
		t.Fatal(err)
	}
	known := func(want1, want2 bool) {
		t.Helper()
		_, ok1 := h.c.producers[1]
		_, ok2 := h.c.producers[2]
		if ok1 != want1 || ok2 != want2 {
			t.Fatalf("at %v: producers known %v %v, want %v %v", h.now.Sub(t0), ok1, ok2, want1, want2)
		}
	}
	h.advance(29 * time.Minute)
	known(true, true)
	h.txnCommit(txnCommitReq("g", 2, 4, "u", 11), kerr.InvalidProducerEpoch)
	h.advance(2 * time.Minute)
	known(true, false)
	h.advance(28 * time.Minute)
	known(true, false)
	h.advance(2 * time.Minute)
	known(false, false)
}

// A TxnOffsetCommit without a generation still names its member when it
// sends a member id or an instance id (v3+), and that member must be the
// group's (Kafka's validateOffsetCommit); only one that names nobody is
// accepted whatever the group's state.
func TestTxnOffsetCommitNamesItsMember(t *testing.T) {
	inst := kmsg.StringPtr("i")
	h := newHarness(t, testOptions())
	_, static, _ := h.staticGroup("g", inst)
	req := func(member string, instance *string) *kmsg.TxnOffsetCommitRequest {
		r := txnCommitReq("g", 1, 0, "t", 5)
		r.MemberID, r.Generation, r.InstanceID = member, -1, instance
		return r
	}
	h.txnCommit(req("x", nil), kerr.UnknownMemberID)
	h.txnCommit(req("", inst), kerr.FencedInstanceID)
	h.txnCommit(req(static, inst), kerr.IllegalGeneration)
	h.txnCommit(req("", nil), nil)
	// Generation 0 is a generation: an unknown group is ILLEGAL_GENERATION.
	unknown := req("m", nil)
	unknown.Group, unknown.Generation = "nope", 0
	h.txnCommit(unknown, kerr.IllegalGeneration)
	if _, ok := h.c.groups["nope"]; ok {
		t.Fatal("a refused commit created a group")
	}
}
