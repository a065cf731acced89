package api

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDeleteTargetRefusals(t *testing.T) {
	idA, idB, idHidden := [16]byte{1}, [16]byte{2}, [16]byte{3}
	// a and b may be deleted; hidden exists but may not be.
	deletable := func(name string) ([16]byte, bool) {
		switch name {
		case "a":
			return idA, true
		case "b":
			return idB, true
		}
		return [16]byte{}, false
	}
	name := func(n string) deleteTarget { return deleteTarget{name: &n} }
	id := func(id [16]byte) deleteTarget { return deleteTarget{id: id} }
	both := deleteTarget{name: kmsg.StringPtr("a"), id: idA}
	for _, tc := range []struct {
		what    string
		targets []deleteTarget
		want    []string // a part of each refusal; "" for none
	}{
		{"names and ids once each", []deleteTarget{name("a"), id(idB), name("missing"), id([16]byte{9})}, []string{"", "", "", ""}},
		{"an empty name is a name", []deleteTarget{name("")}, []string{""}},
		{"neither", []deleteTarget{{}, name("a"), {}}, []string{"neither a topic name nor a topic id", "", "neither a topic name nor a topic id"}},
		{"both", []deleteTarget{both, name("a")}, []string{"topic a is given with a topic id", ""}},
		{"a name twice", []deleteTarget{name("a"), name("b"), name("a")}, []string{"topic a appears more than once", "", "topic a appears more than once"}},
		{"a missing name twice", []deleteTarget{name("gone"), name("gone")}, []string{"topic gone appears more than once", "topic gone appears more than once"}},
		{"an id twice", []deleteTarget{id(idB), id(idB), id(idA)}, []string{"topic id AgAAAAAAAAAAAAAAAAAAAA appears more than once", "topic id AgAAAAAAAAAAAAAAAAAAAA appears more than once", ""}},
		{"a name and its id", []deleteTarget{id(idA), name("b"), name("a")}, []string{"topic id AQAAAAAAAAAAAAAAAAAAAA is also given by its name, a,", "", "topic a is also given by its id"}},
		{"a name not to be deleted and its id", []deleteTarget{name("hidden"), id(idHidden)}, []string{"", ""}},
		{"a name and its id given twice", []deleteTarget{name("a"), id(idA), id(idA)}, []string{"", "appears more than once", "appears more than once"}},
	} {
		got := deleteTargetRefusals(tc.targets, deletable)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %d refusals for %d targets", tc.what, len(got), len(tc.want))
		}
		for i, want := range tc.want {
			if want == "" && got[i] != "" || !strings.Contains(got[i], want) {
				t.Errorf("%s: target %d refused with %q, want %q", tc.what, i, got[i], want)
			}
		}
	}
}

// TestRepeatedTargetsAreRefused: as in Kafka, CreatePartitions and
// DeleteTopics refuse a topic a request names twice (INVALID_REQUEST,
// each copy, and nothing changes), DeleteTopics an entry with both a name
// and an id or neither, and ListOffsets a partition asked twice; what
// else the request names is served.
func TestRepeatedTargetsAreRefused(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	for _, name := range []string{"a", "b"} {
		rh.createTopic(name, nil, []int32{1})
	}
	codes := func(n int, code func(i int) int16) []int16 {
		out := make([]int16, n)
		for i := range out {
			out[i] = code(i)
		}
		return out
	}
	invalid := kerr.InvalidRequest.Code

	grow := kmsg.NewPtrCreatePartitionsRequest()
	for _, c := range []struct {
		topic string
		count int32
	}{{"a", 2}, {"b", 3}, {"a", 4}} {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = c.topic, c.count
		grow.Topics = append(grow.Topics, rt)
	}
	grown := rh.handle(37, 3, grow, "User:ANONYMOUS").(*kmsg.CreatePartitionsResponse).Topics
	if got := codes(len(grown), func(i int) int16 { return grown[i].ErrorCode }); !slices.Equal(got, []int16{invalid, 0, invalid}) {
		t.Fatalf("CreatePartitions of a, b, a: codes %v", got)
	}
	if img := rh.meta.Image(); len(img.Topics["a"].Partitions) != 1 || len(img.Topics["b"].Partitions) != 3 {
		t.Fatalf("after CreatePartitions: a has %d partitions (want 1), b %d (want 3)", len(img.Topics["a"].Partitions), len(img.Topics["b"].Partitions))
	}

	list := kmsg.NewPtrListOffsetsRequest()
	list.ReplicaID = -1
	for _, asked := range []struct {
		topic      string
		partitions []int32
	}{{"b", []int32{0, 1}}, {"a", []int32{0}}, {"b", []int32{1}}} {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = asked.topic
		for _, p := range asked.partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		list.Topics = append(list.Topics, rt)
	}
	var listed []int16
	for _, st := range rh.handle(2, 7, list, "User:ANONYMOUS").(*kmsg.ListOffsetsResponse).Topics {
		for _, sp := range st.Partitions {
			listed = append(listed, sp.ErrorCode)
		}
	}
	if want := []int16{0, invalid, 0, invalid}; !slices.Equal(listed, want) {
		t.Fatalf("ListOffsets of b-0, b-1, a-0, b-1: codes %v, want %v", listed, want)
	}

	del := kmsg.NewPtrDeleteTopicsRequest()
	idB := rh.meta.Image().Topics["b"].ID
	for _, target := range []struct {
		name *string
		id   [16]byte
	}{{kmsg.StringPtr("a"), [16]byte{}}, {nil, idB}, {kmsg.StringPtr("b"), [16]byte{}}, {kmsg.StringPtr("a"), idB}, {nil, [16]byte{}}} {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic, rt.TopicID = target.name, target.id
		del.Topics = append(del.Topics, rt)
	}
	deleted := rh.handle(20, 6, del, "User:ANONYMOUS").(*kmsg.DeleteTopicsResponse).Topics
	// a once by name (deleted), b by id and by name (refused both), a
	// with b's id (refused), neither (refused).
	if got := codes(len(deleted), func(i int) int16 { return deleted[i].ErrorCode }); !slices.Equal(got, []int16{0, invalid, invalid, invalid, invalid}) {
		t.Fatalf("DeleteTopics: codes %v", got)
	}
	img := rh.meta.Image()
	if _, ok := img.Topics["a"]; ok {
		t.Error("topic a, named once, is still there")
	}
	if _, ok := img.Topics["b"]; !ok {
		t.Error("topic b, named by its name and its id, was deleted")
	}

	twice := kmsg.NewPtrDeleteTopicsRequest()
	twice.TopicNames = []string{"b", "b"}
	for _, st := range rh.handle(20, 5, twice, "User:ANONYMOUS").(*kmsg.DeleteTopicsResponse).Topics {
		if st.ErrorCode != invalid || st.ErrorMessage == nil || !strings.Contains(*st.ErrorMessage, "topic b appears more than once") {
			t.Errorf("DeleteTopics v5 of b twice: %d %v", st.ErrorCode, st.ErrorMessage)
		}
	}
	if _, ok := rh.meta.Image().Topics["b"]; !ok {
		t.Error("topic b, named twice, was deleted")
	}
}
