package sharestate

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestStateEpochFenceOnlyRises: an Initialize with state epoch -1 skips
// the check and stores -1, but does not lower the fence (Kafka's
// maybeUpdateStateEpochMap keeps the maximum): a writer of an older state
// epoch stays fenced, before and after a reload.
func TestStateEpochFenceOnlyRises(t *testing.T) {
	h := newHarness(t)
	wantCode(t, "initialize at 5", h.initialize(group, topicA, 0, 5, 0), nil)
	wantCode(t, "initialize without a check", h.initialize(group, topicA, 0, -1, 0), nil)
	for range 2 {
		n := len(h.records)
		wantCode(t, "initialize at 3", h.initialize(group, topicA, 0, 3, 0), kerr.FencedStateEpoch)
		wantCode(t, "write at 3", h.write(writeArgs{group: group, topic: topicA, stateEpoch: 3, leaderEpoch: -1, start: -1}), kerr.FencedStateEpoch)
		if len(h.records) != n {
			t.Fatal("a fenced request wrote a record")
		}
		wantCode(t, "write at 5", h.write(writeArgs{group: group, topic: topicA, stateEpoch: 5, leaderEpoch: -1, start: -1}), nil)
		h.reload()
	}

	// The same from records: a snapshot of a lower state epoch replayed
	// after a higher one.
	c := New(Options{PartitionCount: testPartitionCount})
	mustReplay(t, c, appendKey(snapshotKeyType, testKey), snapshotValue{stateEpoch: 5, start: startAt(0)}.appendTo(nil))
	mustReplay(t, c, appendKey(snapshotKeyType, testKey), snapshotValue{stateEpoch: 2, start: startAt(0)}.appendTo(nil))
	if s := c.states[testKey]; s.stateEpoch != 2 || s.fenceStateEpoch != 5 {
		t.Fatalf("state epoch %d fence %d, want 2 and 5", s.stateEpoch, s.fenceStateEpoch)
	}
}

// TestLoneUpdateSetsTheLeaderFence: a ShareUpdate replayed with no
// snapshot before it makes a state whose leader fence is the update's
// leader epoch (Kafka's handleShareUpdate updates leaderEpochMap first), so
// a leader of an older epoch cannot write or read over it.
func TestLoneUpdateSetsTheLeaderFence(t *testing.T) {
	h := newHarness(t)
	u := updateValue{leaderEpoch: 5, start: startAt(10), batches: []stateBatch{sb(10, 12, avail, 1)}}
	mustReplay(t, h.c, appendKey(updateKeyType, testKey), updateBytes(u))
	k := testKey
	wantCode(t, "write at 3", h.write(writeArgs{group: k.group, topic: k.topicID, partition: k.partition, leaderEpoch: 3, start: -1}), kerr.FencedLeaderEpoch)
	wantCode(t, "read at 4", h.read(k.group, k.topicID, k.partition, 4).ErrorCode, kerr.FencedLeaderEpoch)
	if r := h.read(k.group, k.topicID, k.partition, 5); r.ErrorCode != 0 || r.StartOffset != 10 || len(r.StateBatches) != 1 {
		t.Fatalf("read at the update's leader epoch: %+v", r)
	}
}
