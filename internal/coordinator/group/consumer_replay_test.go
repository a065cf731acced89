package group

import (
	"errors"
	"reflect"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
)

var (
	cgT1 = base.TopicID{0xa1}
	cgT2 = base.TopicID{0xa2}
)

// cgRecord is one consumer group record, as the coordinator would write it.
type cgRecord struct{ key, value []byte }

func cgMetadata(epoch int32) cgRecord {
	return cgRecord{consumerGroupMetadataKey("g"), consumerGroupMetadataValue(consumerGroupMetadata{Epoch: epoch, CreationTimeMs: 1000, HasCreationTime: true})}
}

func cgMember(id string, instance *string, topics ...string) cgRecord {
	return cgRecord{memberMetadataKey("g", id), memberMetadataValue(memberMetadata{InstanceID: instance, ClientID: "client-" + id, ClientHost: "/127.0.0.1",
		SubscribedTopicNames: topics, RebalanceTimeoutMs: 30000})}
}

func cgTargetEpoch(epoch int32) cgRecord {
	return cgRecord{targetAssignmentMetadataKey("g"), targetAssignmentMetadataValue(targetAssignmentMetadata{AssignmentEpoch: epoch})}
}

func cgTarget(id string, a assignor.Assignment) cgRecord {
	return cgRecord{targetAssignmentMemberKey("g", id), targetAssignmentMemberValue(targetAssignmentMember{TopicPartitions: topicPartitionsOf(a)})}
}

func cgCurrent(id string, epoch, prev int32, state reconcile.State, assigned, pending assignor.Assignment) cgRecord {
	return cgRecord{currentMemberAssignmentKey("g", id), currentMemberAssignmentValue(currentMemberAssignment{MemberEpoch: epoch, PreviousMemberEpoch: prev,
		State: int8(state), AssignedPartitions: topicPartitionsOf(assigned), PartitionsPendingRevocation: topicPartitionsOf(pending)})}
}

// tombstone is rec's key without a value.
func tombstone(rec cgRecord) cgRecord { return cgRecord{rec.key, nil} }

// replayAll replays recs onto cg, failing the test on an error.
func replayRecords(t *testing.T, cg *consumerGroup, recs ...cgRecord) *consumerGroup {
	t.Helper()
	for i, r := range recs {
		var err error
		if cg, err = replayRecord(cg, r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	return cg
}

func replayRecord(cg *consumerGroup, r cgRecord) (*consumerGroup, error) {
	k, err := readConsumerKey(r.key)
	if err != nil {
		return cg, err
	}
	return replayConsumer(cg, k, r.value)
}

func tps(t base.TopicID, ps ...int32) assignor.Assignment { return assignor.Assignment{t: ps} }

var noParts = assignor.Assignment{}

// stableGroup is group g at epoch 2 with members a (t1 0-1) and b (t1 2,
// static instance "i-b"), both stable at the target epoch 2.
func stableGroup(t *testing.T) *consumerGroup {
	instance := "i-b"
	return replayRecords(t, nil,
		cgMember("a", nil, "t1"), cgMember("b", &instance, "t1"), cgMetadata(2),
		cgTarget("a", tps(cgT1, 0, 1)), cgTarget("b", tps(cgT1, 2)), cgTargetEpoch(2),
		cgCurrent("a", 2, 1, reconcile.Stable, tps(cgT1, 0, 1), noParts),
		cgCurrent("b", 2, 0, reconcile.Stable, tps(cgT1, 2), noParts))
}

func TestReplayConsumerGroupLoadsItsState(t *testing.T) {
	cg := stableGroup(t)
	if cg.epoch != 2 || cg.assignmentEpoch != 2 || !cg.hasCreated || cg.created.UnixMilli() != 1000 {
		t.Fatalf("group epoch %d, assignment epoch %d, created %v (%v)", cg.epoch, cg.assignmentEpoch, cg.created, cg.hasCreated)
	}
	if got := cg.state(); got != consumerStable {
		t.Fatalf("state %s, want Stable", got)
	}
	a := cg.members["a"]
	if a.clientID != "client-a" || !reflect.DeepEqual(a.topics, []string{"t1"}) || a.rebalanceTimeout.Milliseconds() != 30000 ||
		a.Epoch != 2 || a.PreviousEpoch != 1 || !a.Assigned.Equal(tps(cgT1, 0, 1)) {
		t.Fatalf("member a: %+v", a)
	}
	if cg.static["i-b"] != "b" || len(cg.static) != 1 {
		t.Fatalf("static members %v", cg.static)
	}
	for p, want := range map[int32]int32{0: 2, 1: 2, 2: 2, 3: -1} {
		if got := cg.partitionEpoch(cgT1, p); got != want {
			t.Errorf("partition %d epoch %d, want %d", p, got, want)
		}
	}
	if !cg.targets["b"].Equal(tps(cgT1, 2)) || !reflect.DeepEqual(cg.memberIDs(), []string{"a", "b"}) {
		t.Fatalf("targets %v, members %v", cg.targets, cg.memberIDs())
	}
}

func TestConsumerGroupState(t *testing.T) {
	if got := replayRecords(t, nil, cgMetadata(1)).state(); got != consumerEmpty {
		t.Errorf("no members: %s", got)
	}
	if got := replayRecords(t, stableGroup(t), cgMetadata(3)).state(); got != consumerAssigning {
		t.Errorf("group epoch ahead of the target: %s", got)
	}
	if got := replayRecords(t, stableGroup(t), cgMetadata(3), cgTargetEpoch(3)).state(); got != consumerReconciling {
		t.Errorf("members behind the target: %s", got)
	}
	if got := replayRecords(t, stableGroup(t), cgCurrent("a", 2, 1, reconcile.UnreleasedPartitions, tps(cgT1, 0), noParts)).state(); got != consumerReconciling {
		t.Errorf("a member not stable: %s", got)
	}
}

// A member leaves in Kafka's order: its assignment (which frees its
// partitions), its target, then the member; the group goes last.
func TestReplayConsumerMemberLeaves(t *testing.T) {
	cg := replayRecords(t, stableGroup(t), tombstone(cgCurrent("b", 0, 0, 0, nil, nil)))
	if b := cg.members["b"]; b.Epoch != leaveEpoch || b.Assigned.Size() != 0 || cg.partitionEpoch(cgT1, 2) != -1 {
		t.Fatalf("after b's assignment tombstone: %+v, partition 2 at %d", b.Member, cg.partitionEpoch(cgT1, 2))
	}
	cg = replayRecords(t, cg, tombstone(cgTarget("b", nil)), tombstone(cgMember("b", nil)))
	if _, ok := cg.members["b"]; ok || len(cg.static) != 0 || len(cg.targets) != 1 {
		t.Fatalf("b still there: members %v, static %v, targets %v", cg.memberIDs(), cg.static, cg.targets)
	}
	cg = replayRecords(t, cg, tombstone(cgCurrent("a", 0, 0, 0, nil, nil)), tombstone(cgTarget("a", nil)), tombstone(cgMember("a", nil)),
		tombstone(cgTargetEpoch(0)), tombstone(cgMetadata(0)))
	if cg != nil {
		t.Fatalf("group after its tombstone: %+v", cg)
	}
}

func TestReplayConsumerRefusesBrokenOrder(t *testing.T) {
	for name, tc := range map[string]struct {
		prefix []cgRecord
		bad    cgRecord
	}{
		"a member before its assignment":                  {nil, tombstone(cgMember("a", nil))},
		"a member before its assignment, its target gone": {[]cgRecord{tombstone(cgTarget("a", nil))}, tombstone(cgMember("a", nil))},
		"a member before its target":                      {[]cgRecord{tombstone(cgCurrent("a", 0, 0, 0, nil, nil))}, tombstone(cgMember("a", nil))},
		"a group with members":                            {nil, tombstone(cgMetadata(0))},
		"a partition another member holds": {nil,
			cgCurrent("c", 2, 1, reconcile.Stable, tps(cgT1, 2, 3), noParts)},
		"a partition another member is revoking": {[]cgRecord{cgCurrent("b", 2, 1, reconcile.UnrevokedPartitions, noParts, tps(cgT1, 2))},
			cgCurrent("c", 3, 2, reconcile.Stable, tps(cgT1, 2), noParts)},
		"a value that does not decode":  {nil, cgRecord{memberMetadataKey("g", "d"), []byte{0, 0, 1}}},
		"a value of an unknown version": {nil, cgRecord{consumerGroupMetadataKey("g"), []byte{0, 9, 0, 0, 0, 1, 0}}},
	} {
		t.Run(name, func(t *testing.T) {
			cg := replayRecords(t, stableGroup(t), tc.prefix...)
			want := replayRecords(t, stableGroup(t), tc.prefix...)
			got, err := replayRecord(cg, tc.bad)
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("err %v, want ErrBadRecord", err)
			}
			if got != cg || !reflect.DeepEqual(cg, want) {
				t.Fatalf("a refused record changed the group:\n got %+v\nwant %+v", cg, want)
			}
		})
	}
}

func TestReplayConsumerEdges(t *testing.T) {
	// Tombstones of a group that does not exist are ignored.
	for _, r := range []cgRecord{cgMetadata(1), cgMember("a", nil), cgTargetEpoch(1), cgTarget("a", nil), cgCurrent("a", 0, 0, 0, nil, nil)} {
		if cg, err := replayRecord(nil, tombstone(r)); cg != nil || err != nil {
			t.Fatalf("tombstone of a missing group: %v, %v", cg, err)
		}
	}
	// A bad value creates no group.
	if cg, err := replayRecord(nil, cgRecord{consumerGroupMetadataKey("g"), []byte{0}}); cg != nil || !errors.Is(err, ErrBadRecord) {
		t.Fatalf("bad first record: %v, %v", cg, err)
	}
	// A member's partitions move: the old ones are freed, the new ones
	// take its new epoch; partitions it revokes stay held.
	cg := replayRecords(t, stableGroup(t), cgCurrent("a", 3, 2, reconcile.UnrevokedPartitions, tps(cgT1, 0), tps(cgT1, 1)),
		cgCurrent("b", 4, 2, reconcile.Stable, assignor.Assignment{cgT1: {2}, cgT2: {0}}, noParts))
	for _, c := range []struct {
		t    base.TopicID
		p    int32
		want int32
	}{{cgT1, 0, 3}, {cgT1, 1, 3}, {cgT1, 2, 4}, {cgT2, 0, 4}, {cgT2, 1, -1}} {
		if got := cg.partitionEpoch(c.t, c.p); got != c.want {
			t.Errorf("partition %x/%d at epoch %d, want %d", c.t[0], c.p, got, c.want)
		}
	}
	// A static member that changes its instance id is found by the new one.
	other := "i-b2"
	cg = replayRecords(t, cg, cgMember("b", &other, "t1"))
	if len(cg.static) != 1 || cg.static["i-b2"] != "b" {
		t.Fatalf("static members %v", cg.static)
	}
	// Regular expressions come and go.
	re := cgRecord{regularExpressionKey("g", "t.*"), regularExpressionValue(regularExpression{Topics: []string{"t1", "t2"}, MetadataVersion: 7, TimestampMs: 5})}
	cg = replayRecords(t, cg, re)
	if got := cg.regexes["t.*"]; !reflect.DeepEqual(got.Topics, []string{"t1", "t2"}) || got.MetadataVersion != 7 {
		t.Fatalf("regex %+v", got)
	}
	if cg = replayRecords(t, cg, tombstone(re)); len(cg.regexes) != 0 {
		t.Fatalf("regexes after the tombstone: %v", cg.regexes)
	}
}

func TestAssignmentRecordForm(t *testing.T) {
	a := assignor.Assignment{cgT2: {0, 3}, cgT1: {1}}
	l := topicPartitionsOf(a)
	if len(l) != 2 || l[0].TopicID != cgT1 || l[1].TopicID != cgT2 {
		t.Fatalf("not ascending by topic id: %+v", l)
	}
	if back := assignmentOf(l); !back.Equal(a) {
		t.Fatalf("round trip %v, want %v", back, a)
	}
	// A corrupt list (unsorted, duplicated, a topic twice, an empty topic)
	// still reads as a set.
	messy := []topicPartitions{{TopicID: cgT1, Partitions: []int32{3, 1, 3}}, {TopicID: cgT2}, {TopicID: cgT1, Partitions: []int32{0}}}
	if got := assignmentOf(messy); !got.Equal(assignor.Assignment{cgT1: {0, 1, 3}}) {
		t.Fatalf("messy list read as %v", got)
	}
}
