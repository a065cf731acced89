package group

import (
	"errors"
	"testing"
)

// A share group follows its topics: a topic it subscribes to that gains
// partitions moves the group epoch on at the next heartbeat, and the new
// partitions are assigned, though no subscription changed.
func TestShareGroupFollowsTopicChanges(t *testing.T) {
	opts := testOptions()
	view := harnessTopics
	opts.Topics = func() TopicsView { return view }
	h := newHarness(t, opts)
	a := h.joinShare("g", "a", "t1")
	if a.epoch != 1 || len(a.assigned[cgT1]) != 4 {
		t.Fatalf("a joined: epoch %d, assigned %v", a.epoch, a.assigned)
	}
	view = viewOf(map[string]int32{"t1": 6, "t2": 2})
	h.beatShare("g", a)
	if a.epoch != 2 || len(a.assigned[cgT1]) != 6 {
		t.Fatalf("after t1 grew: epoch %d, assigned %v; want epoch 2 and t1 0-5", a.epoch, a.assigned)
	}
	h.checkReload()
}

// A rebalance of a share group writes the share-state partitions only
// when it initializes partitions that had none: a member joining for
// the same topic adds no ShareGroupStatePartitionMetadata record.
func TestShareRebalanceWritesStatePartitionsOnlyWhenNew(t *testing.T) {
	h := newHarness(t, testOptions())
	stateRecords := func() int {
		n := 0
		for _, r := range h.records {
			if k, err := readConsumerKey(r.Key); err == nil && k.Type == shareStatePartitionMetadataKeyType {
				n++
			}
		}
		return n
	}
	h.joinShare("g", "a", "t1")
	if n := stateRecords(); n != 1 {
		t.Fatalf("%d share-state partition records after the first join, want 1", n)
	}
	h.joinShare("g", "b", "t1")
	if n := stateRecords(); n != 1 {
		t.Fatalf("%d share-state partition records after a join for the same topic, want 1", n)
	}
	h.joinShare("g", "c", "t2")
	if n := stateRecords(); n != 2 {
		t.Fatalf("%d share-state partition records after a join for a new topic, want 2", n)
	}
	h.checkReload()
}

// Replay refuses a share member's metadata tombstone that comes before the
// tombstones of its assignments (the order a leave writes them in): the
// log is broken.
func TestReplayShareRefusesMemberDeletedBeforeItsAssignment(t *testing.T) {
	h := newHarness(t, testOptions())
	h.joinShare("g", "a", "t1")
	sg := h.c.shares["g"]
	k, err := readConsumerKey(shareMemberMetadataKey("g", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replayShare(sg, k, nil); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("member tombstone before its assignment's: %v, want ErrBadRecord", err)
	}
}
