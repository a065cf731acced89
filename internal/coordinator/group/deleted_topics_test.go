package group

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
)

func TestDeletedTopics(t *testing.T) {
	a1, a2, b := base.TopicID{0xa1}, base.TopicID{0xa2}, base.TopicID{0xb}
	for _, tc := range []struct {
		name      string
		prev, cur namedTopics
		names     []string // deleted, of "a", "b" and "c"
		ids       []base.TopicID
	}{
		{"unchanged", namedTopics{"a": a1, "b": b}, namedTopics{"a": a1, "b": b}, nil, nil},
		{"created", namedTopics{"a": a1}, namedTopics{"a": a1, "b": b}, nil, nil},
		{"deleted", namedTopics{"a": a1, "b": b}, namedTopics{"b": b}, []string{"a"}, []base.TopicID{a1}},
		{"created again", namedTopics{"a": a1, "b": b}, namedTopics{"a": a2, "b": b}, []string{"a"}, []base.TopicID{a1}},
		{"all gone", namedTopics{"a": a1, "b": b}, namedTopics{}, []string{"a", "b"}, []base.TopicID{a1, b}},
		{"none before", namedTopics{}, namedTopics{"a": a1}, nil, nil},
		{"created and deleted between looks", namedTopics{"b": b}, namedTopics{"b": b}, nil, nil},
	} {
		names := deletedNames([]string{"a", "b", "c"}, tc.prev.view(), tc.cur.view())
		ids := deletedIDs([]base.TopicID{a1, a2, b}, tc.prev.view(), tc.cur.view())
		if !slices.Equal(names, tc.names) || !slices.Equal(ids, tc.ids) {
			t.Errorf("%s: deleted %v %x, want %v %x", tc.name, names, ids, tc.names, tc.ids)
		}
	}
}

// harnessOver is a harness whose coordinator sees *topics, looked at once
// by a first Tick.
func harnessOver(t *testing.T, topics *namedTopics) *harness {
	o := testOptions()
	o.Topics = func() TopicsView { return topics.view() }
	h := newHarness(t, o)
	h.advance(0)
	return h
}

func (h *harness) fetchedOffsets(group, topic string) map[int32]int64 {
	h.tb.Helper()
	return fetched(h.resp(h.do(fetchV7(group, map[string][]int32{topic: {0, 1}}), "admin")))
}

// A deleted topic's committed and pending offsets get tombstones in every
// group at the next Tick; another topic's stay, and a simple group left
// without offsets is gone.
func TestADeletedTopicTakesItsOffsets(t *testing.T) {
	topics := namedTopics{"a": {0xa1}, "b": {0xb}}
	h := harnessOver(t, &topics)
	for _, req := range []struct {
		group, topic string
		offsets      []int64
	}{{"g1", "a", []int64{10, 11}}, {"g1", "b", []int64{20}}, {"g2", "a", []int64{30}}} {
		if codes := commitCodes(h.resp(h.do(commitReq(req.group, "", -1, req.topic, req.offsets...), "c"))); slices.ContainsFunc(codes, func(c int16) bool { return c != 0 }) {
			t.Fatalf("commit %+v: codes %v", req, codes)
		}
	}
	if codes := txnCodes(h.resp(h.do(txnCommitReq("g3", 7, 0, "a", 40), "tx"))); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("transactional commit codes %v", codes)
	}
	h.checkReload()

	topics = namedTopics{"b": {0xb}}
	before := len(h.records)
	h.advance(100 * time.Millisecond)
	var tombstones []string
	for _, r := range h.records[before:] {
		okey, _, err := readKey(r.Key)
		if err != nil || okey == nil || r.Value != nil {
			t.Fatalf("the sweep wrote %+v (%v), not an offset tombstone", r, err)
		}
		tombstones = append(tombstones, fmt.Sprintf("%s/%s-%d", okey.Group, okey.Topic, okey.Partition))
	}
	if want := []string{"g1/a-0", "g1/a-1", "g2/a-0", "g3/a-0"}; !slices.Equal(tombstones, want) {
		t.Fatalf("tombstones %v, want %v", tombstones, want)
	}
	if got := h.fetchedOffsets("g1", "a"); !reflect.DeepEqual(got, map[int32]int64{0: -1, 1: -1}) {
		t.Fatalf("g1's offsets of the deleted topic: %v", got)
	}
	if got := h.fetchedOffsets("g1", "b"); got[0] != 20 {
		t.Fatalf("g1's offsets of the other topic: %v", got)
	}
	if h.c.groups["g2"] != nil || h.c.groups["g3"] != nil {
		t.Fatal("a group left with no offsets is still there")
	}
	h.checkReload()
	before = len(h.records)
	h.advance(100 * time.Millisecond)
	if len(h.records) != before {
		t.Fatalf("a second Tick wrote %d records", len(h.records)-before)
	}
}

// A topic deleted and created again between two Ticks: the first commit to
// the new topic finds the old one's offsets gone, in every group, and its
// own offset written after their tombstones.
func TestATopicCreatedAgainStartsWithoutOffsets(t *testing.T) {
	topics := namedTopics{"a": {0xa1}}
	h := harnessOver(t, &topics)
	h.resp(h.do(commitReq("g1", "", -1, "a", 7, 8), "c"))
	h.resp(h.do(commitReq("g2", "", -1, "a", 9), "c"))

	topics = namedTopics{"a": {0xa2}}
	if codes := commitCodes(h.resp(h.do(commitReq("g1", "", -1, "a", 3), "c"))); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("commit to the new topic: codes %v", codes)
	}
	if got := h.fetchedOffsets("g1", "a"); !reflect.DeepEqual(got, map[int32]int64{0: 3, 1: -1}) {
		t.Fatalf("g1's offsets of the new topic: %v", got)
	}
	if got := h.fetchedOffsets("g2", "a"); !reflect.DeepEqual(got, map[int32]int64{0: -1, 1: -1}) {
		t.Fatalf("g2's offsets of the new topic: %v", got)
	}
	h.checkReload()
}

// A share group forgets the share-partition state of a deleted topic.
func TestADeletedTopicLeavesTheShareGroupsState(t *testing.T) {
	a, b := base.TopicID{0xa1}, base.TopicID{0xb}
	topics := namedTopics{"a": a, "b": b}
	h := harnessOver(t, &topics)
	h.joinShare("s", "m", "a", "b")
	if got := len(h.c.shares["s"].stateTopics); got != 2 {
		t.Fatalf("%d state topics before the delete, want 2", got)
	}
	topics = namedTopics{"b": b}
	h.advance(100 * time.Millisecond)
	if got := slices.Collect(maps.Keys(h.c.shares["s"].stateTopics)); !slices.Equal(got, []base.TopicID{b}) {
		t.Fatalf("state topics %x after the delete, want %x", got, b)
	}
	h.checkReload()
}

// A transactional commit cannot carry the tombstones of a deletion: while
// one is to be applied it is refused, retriably, and once a Tick has
// applied it the commit lands and stays.
func TestATransactionalCommitWaitsForADeletion(t *testing.T) {
	topics := namedTopics{"a": {0xa1}}
	h := harnessOver(t, &topics)
	h.resp(h.do(commitReq("g", "", -1, "a", 7), "c"))

	topics = namedTopics{"a": {0xa2}}
	if codes := txnCodes(h.resp(h.do(txnCommitReq("g", 7, 0, "a", 3), "tx"))); !slices.Equal(codes, []int16{kerr.CoordinatorLoadInProgress.Code}) {
		t.Fatalf("transactional commit before the tombstones: codes %v", codes)
	}
	h.advance(100 * time.Millisecond)
	if codes := txnCodes(h.resp(h.do(txnCommitReq("g", 7, 0, "a", 3), "tx"))); !slices.Equal(codes, []int16{0}) {
		t.Fatalf("transactional commit after the tombstones: codes %v", codes)
	}
	h.advance(100 * time.Millisecond)
	if !h.c.groups["g"].hasTxnOffset(base.TopicPartition{Topic: "a", Partition: 0}) {
		t.Fatal("the pending offset of the new topic is gone")
	}
	h.checkReload()
}
