package api

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
)

func TestElectLeadersRegistered(t *testing.T) {
	checkAdvertised(t, 43, 0, 2)
}

// electLeaders sends an ElectLeaders of electionType for topic → partitions
// (nil: every partition) at version, as principal.
func (rh *replicaHarness) electLeaders(version int16, principal string, electionType int8, topics map[string][]int32) *kmsg.ElectLeadersResponse {
	rh.t.Helper()
	r := kmsg.NewPtrElectLeadersRequest()
	r.ElectionType = electionType
	if topics != nil {
		r.Topics = []kmsg.ElectLeadersRequestTopic{}
		for name, parts := range topics {
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic, rt.Partitions = name, parts
			r.Topics = append(r.Topics, rt)
		}
	}
	return rh.handle(43, version, r, principal).(*kmsg.ElectLeadersResponse)
}

// electionCodes flattens a response to "topic-partition" → error code,
// checking that no partition is answered twice.
func electionCodes(t *testing.T, resp *kmsg.ElectLeadersResponse) map[string]int16 {
	t.Helper()
	out := map[string]int16{}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			key := fmt.Sprintf("%s-%d", rt.Topic, p.Partition)
			if _, dup := out[key]; dup {
				t.Fatalf("%s answered twice", key)
			}
			out[key] = p.ErrorCode
		}
	}
	return out
}

// TestElectLeadersPreferred: after a failover, the preferred replica out
// of the ISR is not available; back in the ISR, it is elected; a partition
// led by its preferred replica needs no election; unknown partitions are
// unknown. Topics null answers only the partitions that needed an election.
func TestElectLeadersPreferred(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("e", nil, []int32{2, 1, 3}, []int32{1, 2, 3})
	rh.fence(2)
	if err := rh.meta.UnfenceBroker(t.Context(), 2, rh.epochs[2]); err != nil {
		t.Fatal(err)
	}
	asked := map[string][]int32{"e": {0, 1, 5, 0}, "nope": {0}}
	for _, version := range []int16{0, 1, 2} {
		got := electionCodes(t, rh.electLeaders(version, "User:ANONYMOUS", 0, asked))
		want := map[string]int16{"e-0": kerr.PreferredLeaderNotAvailable.Code, "e-1": kerr.ElectionNotNeeded.Code,
			"e-5": kerr.UnknownTopicOrPartition.Code, "nope-0": kerr.UnknownTopicOrPartition.Code}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("v%d: %v, want %v", version, got, want)
		}
	}
	if got := electionCodes(t, rh.electLeaders(2, "User:ANONYMOUS", 0, nil)); !reflect.DeepEqual(got, map[string]int16{"e-0": kerr.PreferredLeaderNotAvailable.Code}) {
		t.Errorf("every partition: %v, want only e-0", got)
	}

	// The leader (1) takes 2 back into the ISR once it caught up.
	topic := rh.meta.Image().Topics["e"]
	p := topic.Partitions[0]
	if _, err := rh.meta.AlterPartition(t.Context(), metadata.ISRChange{TopicID: topic.ID, Partition: 0, Leader: p.Leader,
		BrokerEpoch: rh.epochs[p.Leader], LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: []int32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	resp := rh.electLeaders(1, "User:ANONYMOUS", 0, map[string][]int32{"e": {0}})
	if got := electionCodes(t, resp); resp.ErrorCode != 0 || !reflect.DeepEqual(got, map[string]int16{"e-0": 0}) {
		t.Fatalf("elected: top-level %d, %v", resp.ErrorCode, got)
	}
	if p := rh.meta.Image().Topics["e"].Partitions[0]; p.Leader != 2 {
		t.Fatalf("e-0 after its election: %+v", p)
	}
	if resp := rh.electLeaders(2, "User:ANONYMOUS", 0, nil); len(resp.Topics) != 0 || resp.ErrorCode != 0 {
		t.Errorf("every partition, all balanced: %+v", resp)
	}
}

// TestElectLeadersUnclean: a partition with a leader needs no election;
// one whose only in-sync replica is fenced gets its live replica outside
// the ISR as leader and sole ISR member; one whose every replica is fenced
// gets ELIGIBLE_LEADERS_NOT_AVAILABLE, saying why.
func TestElectLeadersUnclean(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("solo", nil, []int32{3, 2})
	topic := rh.meta.Image().Topics["solo"]
	p := topic.Partitions[0]
	if _, err := rh.meta.AlterPartition(t.Context(), metadata.ISRChange{TopicID: topic.ID, Partition: 0, Leader: 3,
		BrokerEpoch: rh.epochs[3], LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: []int32{3}}); err != nil {
		t.Fatal(err)
	}
	rh.createTopic("led", nil, []int32{1, 2})
	rh.createTopic("gone", nil, []int32{3})
	rh.fence(3)
	resp := rh.electLeaders(2, "User:ANONYMOUS", 1, map[string][]int32{"solo": {0}, "led": {0}, "gone": {0}, "nope": {1}})
	got := electionCodes(t, resp)
	want := map[string]int16{"solo-0": 0, "led-0": kerr.ElectionNotNeeded.Code,
		"gone-0": kerr.EligibleLeadersNotAvailable.Code, "nope-1": kerr.UnknownTopicOrPartition.Code}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for _, rt := range resp.Topics {
		if rt.Topic == "gone" {
			if msg := rt.Partitions[0].ErrorMessage; msg == nil || !strings.Contains(*msg, "can lead") {
				t.Errorf("message %v does not say that no replica can lead", msg)
			}
		}
	}
	if p := rh.meta.Image().Topics["solo"].Partitions[0]; p.Leader != 2 || !reflect.DeepEqual(p.ISR, []int32{2}) {
		t.Errorf("solo-0 after the unclean election: %+v, want leader 2, ISR [2]", p)
	}
	if p := rh.meta.Image().Topics["gone"].Partitions[0]; p.Leader != metadata.NoLeader {
		t.Errorf("gone-0 got a leader: %+v", p)
	}
	bad := rh.electLeaders(1, "User:ANONYMOUS", 7, map[string][]int32{"led": {0}})
	if got := electionCodes(t, bad); bad.ErrorCode != kerr.InvalidRequest.Code || got["led-0"] != kerr.InvalidRequest.Code {
		t.Errorf("election type 7: top-level %d, %v", bad.ErrorCode, got)
	}
}

// TestElectLeadersNeedsAlterOnCluster: without ALTER on the cluster every
// partition asked for, and the response (v1+), is refused; a super user is
// served.
func TestElectLeadersNeedsAlterOnCluster(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("e", nil, []int32{1, 2})
	asked := map[string][]int32{"e": {0}}
	for _, version := range []int16{0, 1, 2} {
		resp := rh.electLeaders(version, "User:mallory", 0, asked)
		// v0 has no top-level code on the wire: the partitions carry it.
		if got := electionCodes(t, resp); version > 0 && resp.ErrorCode != clusterDenied || got["e-0"] != clusterDenied {
			t.Errorf("v%d denied: top-level %d, %v", version, resp.ErrorCode, got)
		}
	}
	if resp := rh.electLeaders(2, "User:mallory", 0, nil); resp.ErrorCode != clusterDenied || len(resp.Topics) != 0 {
		t.Errorf("every partition, denied: %+v", resp)
	}
	if got := electionCodes(t, rh.electLeaders(2, "User:admin", 0, asked)); got["e-0"] != kerr.ElectionNotNeeded.Code {
		t.Errorf("super user: %v", got)
	}
}
