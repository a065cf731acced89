package api

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit and OffsetFetch v10 name topics by id: the offsets land
// under the topic's name (a v9 fetch finds them), answers carry the ids,
// an unknown id is UNKNOWN_TOPIC_ID, and a fetch of every topic names
// them by id.
func TestOffsetsByTopicID(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("data", nil, []int32{1})
	rh.withGroups()
	g := groupOnPartition(t, 0)
	id := rh.meta.Image().Topics["data"].ID
	unknown := [16]byte{0xde, 0xad}

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = g, -1
	for _, tid := range [][16]byte{id, unknown} {
		ct := kmsg.NewOffsetCommitRequestTopic()
		ct.TopicID = tid
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Offset = 42
		ct.Partitions = append(ct.Partitions, cp)
		commit.Topics = append(commit.Topics, ct)
	}
	var cresp *kmsg.OffsetCommitResponse
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cresp = rh.handle(8, 10, commit, "User:ANONYMOUS").(*kmsg.OffsetCommitResponse)
		if cresp.Topics[0].Partitions[0].ErrorCode != kerr.CoordinatorLoadInProgress.Code || time.Now().After(deadline) {
			break // the coordinator partition has loaded
		}
	}
	codes := map[[16]byte]int16{}
	for _, ct := range cresp.Topics {
		codes[ct.TopicID] = ct.Partitions[0].ErrorCode
	}
	if len(codes) != 2 || codes[id] != 0 || codes[unknown] != kerr.UnknownTopicID.Code {
		t.Fatalf("v10 commit answered %+v", cresp.Topics)
	}
	if got := rh.committedOffset(g); got != 42 {
		t.Fatalf("a v9 fetch finds offset %d, want 42", got)
	}

	fetch := func(topics []kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchResponseGroup {
		t.Helper()
		r := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.Topics = g, topics
		r.Groups = append(r.Groups, rg)
		return rh.handle(9, 10, r, "User:ANONYMOUS").(*kmsg.OffsetFetchResponse).Groups[0]
	}
	named := fetch([]kmsg.OffsetFetchRequestGroupTopic{{TopicID: id, Partitions: []int32{0}}, {TopicID: unknown, Partitions: []int32{0}}})
	if len(named.Topics) != 2 || named.Topics[0].TopicID != id || named.Topics[0].Partitions[0].Offset != 42 ||
		named.Topics[1].TopicID != unknown || named.Topics[1].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("v10 fetch answered %+v", named.Topics)
	}
	all := fetch(nil)
	if len(all.Topics) != 1 || all.Topics[0].TopicID != id || all.Topics[0].Partitions[0].Offset != 42 {
		t.Fatalf("v10 fetch of every topic answered %+v", all.Topics)
	}
}
