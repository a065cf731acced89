package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/offsets"
)

// groupsOnPartition are n group ids that __consumer_offsets partition idx
// (of two) coordinates, each prefixed by prefix.
func groupsOnPartition(t *testing.T, prefix string, idx int32, n int) []string {
	t.Helper()
	var out []string
	for i := 0; len(out) < n && i < 10000; i++ {
		if g := prefix + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)); offsets.PartitionFor(g, 2) == idx {
			out = append(out, g)
		}
	}
	if len(out) < n {
		t.Fatalf("only %d group ids on partition %d", len(out), idx)
	}
	return out
}

// TestTopicChecksPastTheGroupACL: a principal who may use a group, but not
// a topic, is refused that topic by every group API that names it, with
// TOPIC_AUTHORIZATION_FAILED as Kafka answers: the first check (the
// group's) lets these requests through, so a second one must hold.
func TestTopicChecksPastTheGroupACL(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	const topic = "guarded"
	rh.createTopic(topic, nil, []int32{1})
	rh.withGroups()
	ids := groupsOnPartition(t, "past-", 0, 2)
	consumers, sharers := ids[0], ids[1]
	for _, g := range ids {
		for _, op := range []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete} {
			rh.allow("User:alice", kmsg.ACLResourceTypeGroup, g, op)
		}
	}
	topicID := rh.meta.Image().Topics[topic].ID

	consumerBeat := func(principal string) *kmsg.ConsumerGroupHeartbeatResponse {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Group, r.MemberID, r.MemberEpoch = consumers, principal+"-member", 0
		r.RebalanceTimeoutMillis, r.SubscribedTopicNames, r.Topics = 30000, []string{topic}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		return rh.handle(68, registry[68].max, r, principal).(*kmsg.ConsumerGroupHeartbeatResponse)
	}
	shareBeat := func(principal string) *kmsg.ShareGroupHeartbeatResponse {
		r := kmsg.NewPtrShareGroupHeartbeatRequest()
		r.GroupID, r.MemberID, r.MemberEpoch, r.SubscribedTopicNames = sharers, principal+"-member-of-share", 0, []string{topic}
		return rh.handle(76, registry[76].max, r, principal).(*kmsg.ShareGroupHeartbeatResponse)
	}
	// The admin's members make both groups use the topic.
	if code := rh.retryLoading(func() int16 { return consumerBeat("User:admin").ErrorCode }); code != 0 {
		t.Fatalf("the admin's consumer group heartbeat: error %d", code)
	}
	if code := rh.retryLoading(func() int16 { return shareBeat("User:admin").ErrorCode }); code != 0 {
		t.Fatalf("the admin's share group heartbeat: error %d", code)
	}

	topicDenied := kerr.TopicAuthorizationFailed.Code
	for _, tc := range []struct {
		name string
		call func() kmsg.Response
	}{
		{"ConsumerGroupHeartbeat subscribing to the topic", func() kmsg.Response { return consumerBeat("User:alice") }},
		{"ShareGroupHeartbeat subscribing to the topic", func() kmsg.Response { return shareBeat("User:alice") }},
		{"ConsumerGroupDescribe of a group using the topic", func() kmsg.Response {
			r := kmsg.NewPtrConsumerGroupDescribeRequest()
			r.Groups = []string{consumers}
			return rh.handle(69, registry[69].max, r, "User:alice")
		}},
		{"ShareGroupDescribe of a group assigned the topic", func() kmsg.Response {
			r := kmsg.NewPtrShareGroupDescribeRequest()
			r.GroupIDs = []string{sharers}
			return rh.handle(77, registry[77].max, r, "User:alice")
		}},
		{"ShareFetch of the topic", func() kmsg.Response {
			return rh.handle(78, registry[78].max, shareFetchOf(sharers, "alice-share-fetcher", topicID), "User:alice")
		}},
		{"DescribeShareGroupOffsets of the topic", func() kmsg.Response {
			return rh.handle(90, registry[90].max, describeShareOffsetsOf(sharers, topic), "User:alice")
		}},
		{"AlterShareGroupOffsets of the topic", func() kmsg.Response {
			return rh.handle(91, registry[91].max, alterShareOffsetsOf(sharers, topic), "User:alice")
		}},
		{"DeleteShareGroupOffsets of the topic", func() kmsg.Response {
			return rh.handle(92, registry[92].max, deleteShareOffsetsOf(sharers, topic), "User:alice")
		}},
	} {
		if codes := errorCodes(tc.call()); !slices.Contains(codes, topicDenied) {
			t.Errorf("%s, with the group's ACLs only: error codes %v, want %d among them", tc.name, codes, topicDenied)
		}
	}
}
