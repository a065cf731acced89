package api

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeTopicPartitionsRegistered(t *testing.T) {
	checkAdvertised(t, 75, 0, 0)
}

// describeTopicPartitions asks for topics (none: every topic) from cursor
// ("": none, else "topic:partition") with limit, as principal.
func (rh *replicaHarness) describeTopicPartitions(principal string, limit int32, cursor string, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
	rh.t.Helper()
	r := kmsg.NewPtrDescribeTopicPartitionsRequest()
	r.ResponsePartitionLimit = limit
	for _, name := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		r.Topics = append(r.Topics, rt)
	}
	if cursor != "" {
		var c kmsg.DescribeTopicPartitionsRequestCursor
		if _, err := fmt.Sscanf(strings.Replace(cursor, ":", " ", 1), "%s %d", &c.Topic, &c.Partition); err != nil {
			rh.t.Fatal(err)
		}
		r.Cursor = &c
	}
	return rh.handle(75, 0, r, principal).(*kmsg.DescribeTopicPartitionsResponse)
}

// describedPage is a response as "topic[error]:partitions" entries and the
// next cursor ("" for none).
func describedPage(resp *kmsg.DescribeTopicPartitionsResponse) ([]string, string) {
	var out []string
	for _, rt := range resp.Topics {
		s := fmt.Sprintf("%s[%d]:", *rt.Topic, rt.ErrorCode)
		for _, p := range rt.Partitions {
			s += fmt.Sprint(p.Partition)
		}
		out = append(out, s)
	}
	next := ""
	if c := resp.NextCursor; c != nil {
		next = fmt.Sprintf("%s:%d", c.Topic, c.Partition)
	}
	return out, next
}

// TestDescribeTopicPartitionsPages: topics in name order, paged by the
// limit with a cursor to the next partition; named topics that do not
// exist are answered, with UNKNOWN_TOPIC_OR_PARTITION or, for a name that
// cannot be a topic's, INVALID_TOPIC_EXCEPTION; a cursor on a topic not
// named is INVALID_REQUEST.
func TestDescribeTopicPartitionsPages(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("b", nil, []int32{2, 1}, []int32{1, 2})
	rh.createTopic("a", nil, []int32{1}, []int32{1}, []int32{1})
	unknown, invalid := kerr.UnknownTopicOrPartition.Code, kerr.InvalidTopicException.Code
	for _, tc := range []struct {
		name   string
		limit  int32
		cursor string
		topics []string
		want   []string
		next   string
	}{
		{"every topic", 10, "", nil, []string{"a[0]:012", "b[0]:01"}, ""},
		{"limit inside a topic", 4, "", nil, []string{"a[0]:012", "b[0]:0"}, "b:1"},
		{"from that cursor", 4, "b:1", nil, []string{"b[0]:1"}, ""},
		{"limit at a topic's end", 3, "", nil, []string{"a[0]:012"}, "b:0"},
		{"over the most a page holds", 1 << 30, "", nil, []string{"a[0]:012", "b[0]:01"}, ""},
		{"named, sorted, once each", 10, "", []string{"b", "nope", "a", "b", "bad/name"},
			[]string{"a[0]:012", "b[0]:01", fmt.Sprintf("bad/name[%d]:", invalid), fmt.Sprintf("nope[%d]:", unknown)}, ""},
		{"named from a cursor", 10, "a:2", []string{"b", "a"}, []string{"a[0]:2", "b[0]:01"}, ""},
		{"cursor on a topic not named", 10, "a:0", []string{"b"}, []string{fmt.Sprintf("b[%d]:", kerr.InvalidRequest.Code)}, ""},
	} {
		got, next := describedPage(rh.describeTopicPartitions("User:ANONYMOUS", tc.limit, tc.cursor, tc.topics...))
		if !reflect.DeepEqual(got, tc.want) || next != tc.next {
			t.Errorf("%s: %v, next %q; want %v, next %q", tc.name, got, next, tc.want, tc.next)
		}
	}

	resp := rh.describeTopicPartitions("User:ANONYMOUS", 10, "", "b")
	b := rh.meta.Image().Topics["b"]
	rt := resp.Topics[0]
	if rt.TopicID != b.ID || rt.IsInternal || rt.AuthorizedOperations <= 0 {
		t.Errorf("b: id %x, internal %v, authorized operations %d; want %x, false, every operation", rt.TopicID, rt.IsInternal, rt.AuthorizedOperations, b.ID)
	}
	p := rt.Partitions[0]
	if p.LeaderID != 2 || p.LeaderEpoch != int32(b.Partitions[0].LeaderEpoch) || !reflect.DeepEqual(p.Replicas, []int32{2, 1}) ||
		!reflect.DeepEqual(p.ISR, []int32{2, 1}) || len(p.OfflineReplicas) != 0 || p.EligibleLeaderReplicas == nil || len(p.EligibleLeaderReplicas) != 0 {
		t.Errorf("b-0: %+v, want leader 2, replicas and ISR [2 1], none offline, no eligible leader replicas", p)
	}
}

// TestDescribeTopicPartitionsOfflineReplicas: a replica on a fenced broker
// is offline, in DescribeTopicPartitions and in Metadata.
func TestDescribeTopicPartitionsOfflineReplicas(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("o", nil, []int32{1, 3})
	rh.fence(3)
	p := rh.describeTopicPartitions("User:ANONYMOUS", 10, "", "o").Topics[0].Partitions[0]
	if !reflect.DeepEqual(p.OfflineReplicas, []int32{3}) {
		t.Errorf("DescribeTopicPartitions: offline replicas %v, want [3]", p.OfflineReplicas)
	}
	r := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("o")
	r.Topics = append(r.Topics, mt)
	meta := rh.handle(3, 12, r, "User:ANONYMOUS").(*kmsg.MetadataResponse)
	if got := meta.Topics[0].Partitions[0].OfflineReplicas; !reflect.DeepEqual(got, []int32{3}) {
		t.Errorf("Metadata: offline replicas %v, want [3]", got)
	}
}

// TestDescribeTopicPartitionsAuthorization: with an authorizer, a topic
// without DESCRIBE is left out when every topic is asked for, and answered
// TOPIC_AUTHORIZATION_FAILED (after the others, whether it exists or not,
// with no id) when named.
func TestDescribeTopicPartitionsAuthorization(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("open", nil, []int32{1})
	rh.createTopic("closed", nil, []int32{1})
	rh.allow("User:alice", kmsg.ACLResourceTypeTopic, "open", kmsg.ACLOperationDescribe)
	denied := fmt.Sprintf("[%d]:", kerr.TopicAuthorizationFailed.Code)
	if got, _ := describedPage(rh.describeTopicPartitions("User:alice", 10, "")); !reflect.DeepEqual(got, []string{"open[0]:0"}) {
		t.Errorf("every topic: %v, want only open", got)
	}
	resp := rh.describeTopicPartitions("User:alice", 10, "", "closed", "open", "ghost")
	if got, _ := describedPage(resp); !reflect.DeepEqual(got, []string{"open[0]:0", "closed" + denied, "ghost" + denied}) {
		t.Errorf("named: %v, want open, then closed and ghost denied", got)
	}
	if resp.Topics[1].TopicID != [16]byte{} {
		t.Errorf("a denied topic's id was disclosed: %x", resp.Topics[1].TopicID)
	}
}

// TestDescribeTopicPartitionsBrokerLimit: max.request.partition.size.limit
// bounds a page below the client's limit.
func TestDescribeTopicPartitionsBrokerLimit(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{"max.request.partition.size.limit": "2"})
	rh.createTopic("a", nil, []int32{1}, []int32{1}, []int32{1})
	got, next := describedPage(rh.describeTopicPartitions("User:ANONYMOUS", 10, ""))
	if !reflect.DeepEqual(got, []string{"a[0]:01"}) || next != "a:2" {
		t.Errorf("a page under a broker limit of 2: %v, next %q; want a's first two, next a:2", got, next)
	}
}
