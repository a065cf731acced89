package group

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
)

func cgMemberWith(id string, assignorName *string, regex *string, topics ...string) cgRecord {
	return cgRecord{memberMetadataKey("g", id), memberMetadataValue(memberMetadata{ClientID: "c", ClientHost: "/h",
		SubscribedTopicNames: topics, SubscribedTopicRegex: regex, ServerAssignor: assignorName, RebalanceTimeoutMs: 1000})}
}

func TestAssignmentSpec(t *testing.T) {
	re := cgRecord{regularExpressionKey("g", "t[23]"), regularExpressionValue(regularExpression{Topics: []string{"t2", "t3"}})}
	cg := replayRecords(t, nil, re,
		cgMemberWith("b", nil, ptr("t[23]"), "t1", "t2"),
		cgMemberWith("a", nil, nil, "t1", "gone"),
		cgMemberWith("c", nil, ptr("unresolved.*")),
		cgTarget("a", tps(cgT1, 0)))
	spec := cg.assignmentSpec(viewOf(map[string]int32{"t1": 2, "t2": 3, "t3": 1}))
	want := assignor.Spec{
		Members: []assignor.Member{
			{ID: "a", Subscribed: []base.TopicID{cgT1}, Current: tps(cgT1, 0)},
			{ID: "b", Subscribed: []base.TopicID{cgT1, cgT2, {0xa3}}},
			{ID: "c"},
		},
		Topics: map[base.TopicID]assignor.Topic{cgT1: {Name: "t1", Partitions: 2}, cgT2: {Name: "t2", Partitions: 3}, {0xa3}: {Name: "t3", Partitions: 1}},
	}
	if !reflect.DeepEqual(spec, want) {
		t.Fatalf("spec\n got %+v\nwant %+v", spec, want)
	}
}

func TestSubscriptionHash(t *testing.T) {
	view := viewOf(map[string]int32{"t1": 2, "t2": 3})
	one := replayRecords(t, nil, cgMemberWith("a", nil, nil, "t1", "t2"))
	other := replayRecords(t, nil, cgMemberWith("x", nil, nil, "t2"), cgMemberWith("y", nil, nil, "t1", "missing"))
	if h := one.subscriptionHash(view); h == 0 || h != other.subscriptionHash(view) {
		t.Fatalf("the same topics hash differently: %x, %x", h, other.subscriptionHash(view))
	}
	if one.subscriptionHash(view) == one.subscriptionHash(viewOf(map[string]int32{"t1": 2, "t2": 4})) {
		t.Fatal("a topic gaining a partition does not change the hash")
	}
	if one.subscriptionHash(view) == one.subscriptionHash(viewOf(map[string]int32{"t1": 2})) {
		t.Fatal("a topic deleted does not change the hash")
	}
	if h := replayRecords(t, nil, cgMemberWith("a", nil, nil, "missing")).subscriptionHash(view); h != 0 {
		t.Fatalf("no existing topic hashes to %x, want 0", h)
	}
}

// testAssignors are the server assignors Kafka offers by default.
var testAssignors = []string{assignor.UniformName, assignor.RangeName}

func TestPreferredAssignor(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		votes   []*string
		want    string
	}{
		{testAssignors, nil, assignor.UniformName},
		{testAssignors, []*string{nil, nil}, assignor.UniformName},
		{testAssignors, []*string{ptr("range")}, assignor.RangeName},
		{testAssignors, []*string{ptr("range"), ptr("uniform"), ptr("range")}, assignor.RangeName},
		{testAssignors, []*string{ptr("range"), ptr("uniform")}, assignor.UniformName},
		{testAssignors, []*string{ptr("uniform"), ptr("range"), nil}, assignor.UniformName},
		{[]string{"range", "uniform"}, nil, assignor.RangeName},
		{[]string{"range", "uniform"}, []*string{ptr("range"), ptr("uniform")}, assignor.RangeName},
		{[]string{"range"}, []*string{ptr("uniform"), ptr("uniform")}, assignor.RangeName},
	} {
		var recs []cgRecord
		for i, v := range tc.votes {
			recs = append(recs, cgMemberWith(string(rune('a'+i)), v, nil, "t1"))
		}
		cg := replayRecords(t, nil, append(recs, cgMetadata(1))...)
		if got := cg.preferredAssignor(tc.offered).Name(); got != tc.want {
			t.Errorf("offered %v, votes %v: %s, want %s", tc.offered, tc.votes, got, tc.want)
		}
	}
}

// A new member joins a stable group: the target moves only for the
// members whose partitions change, the target epoch follows the group
// epoch, and the group is then Reconciling.
func TestAssignTargets(t *testing.T) {
	view := viewOf(map[string]int32{"t1": 4})
	stable := replayRecords(t, nil,
		cgMember("a", nil, "t1"), cgMember("b", nil, "t1"), cgMetadata(1),
		cgTarget("a", tps(cgT1, 0, 1)), cgTarget("b", tps(cgT1, 2, 3)), cgTargetEpoch(1),
		cgCurrent("a", 1, 0, reconcile.Stable, tps(cgT1, 0, 1), noParts),
		cgCurrent("b", 1, 0, reconcile.Stable, tps(cgT1, 2, 3), noParts))

	w := consumerWrite{id: "g", cg: stable}
	w.write(cgMember("c", nil, "t1").key, cgMember("c", nil, "t1").value)
	w.write(cgMetadata(2).key, cgMetadata(2).value)
	w.records = nil
	w.assignTargets(view, testAssignors, time.UnixMilli(5000))

	var keys []consumerKey
	for _, r := range w.records {
		k, err := readConsumerKey(r.Key)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if len(keys) != 3 || keys[2].Type != targetAssignmentMetadataKeyType || keys[0].Member == "" || keys[1].Member == "" || keys[0].Member == keys[1].Member {
		t.Fatalf("records %+v: want two members' targets, then the target epoch", keys)
	}
	cg := w.cg
	if cg.assignmentEpoch != 2 || cg.targets["c"].Size() != 1 || cg.targets["a"].Size()+cg.targets["b"].Size() != 3 {
		t.Fatalf("targets %v at epoch %d", cg.targets, cg.assignmentEpoch)
	}
	if v, err := readTargetAssignmentMetadataValue(w.records[2].Value); err != nil || v.AssignmentTimestampMs != 5000 {
		t.Fatalf("target epoch record %+v, %v", v, err)
	}
	if got := cg.state(); got != consumerReconciling {
		t.Fatalf("state %s, want Reconciling", got)
	}

	// Assigning again with nothing changed writes only the epoch.
	w = consumerWrite{id: "g", cg: cg}
	w.assignTargets(view, testAssignors, time.UnixMilli(6000))
	if len(w.records) != 1 {
		t.Fatalf("%d records for an unchanged assignment, want 1", len(w.records))
	}
}

func TestConsumerWritePanicsOnARecordThatDoesNotApply(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	w := consumerWrite{id: "g", cg: stableGroup(t)}
	w.write(tombstone(cgMember("a", nil)).key, nil) // before its assignment
}
