package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeQuorumRegistered(t *testing.T) {
	checkAdvertised(t, 55, 0, 2)
}

// describeQuorum sends DescribeQuorum for topic → partitions at version.
func (rh *replicaHarness) describeQuorum(version int16, principal string, topics map[string][]int32) *kmsg.DescribeQuorumResponse {
	rh.t.Helper()
	r := kmsg.NewPtrDescribeQuorumRequest()
	for name, parts := range topics {
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = name
		for _, p := range parts {
			rp := kmsg.NewDescribeQuorumRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = append(r.Topics, rt)
	}
	return rh.handle(55, version, r, principal).(*kmsg.DescribeQuorumResponse)
}

var theQuorum = map[string][]int32{quorumTopic: {0}}

// TestDescribeQuorumOfOneNode: the node is the one voter and the leader, at
// the metadata version it holds; v2 lists it as the one voter node.
func TestDescribeQuorumOfOneNode(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("q", nil, []int32{1})
	version := int64(rh.meta.Image().Version)
	for v := int16(0); v <= 2; v++ {
		resp := rh.describeQuorum(v, "User:ANONYMOUS", theQuorum)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Topic != quorumTopic || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("v%d: %+v", v, resp)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch < 1 || p.HighWatermark != version {
			t.Errorf("v%d: partition %+v, want leader 1 at version %d", v, p, version)
		}
		if len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != 1 || p.CurrentVoters[0].LogEndOffset != version ||
			p.CurrentVoters[0].LastFetchTimestamp <= 0 || p.CurrentVoters[0].LastCaughtUpTimestamp <= 0 || len(p.Observers) != 0 {
			t.Errorf("v%d: voters %+v, observers %+v", v, p.CurrentVoters, p.Observers)
		}
		wantNodes := 0
		if v >= 2 {
			wantNodes = 1
		}
		if len(resp.Nodes) != wantNodes {
			t.Fatalf("v%d: nodes %+v", v, resp.Nodes)
		}
		if v >= 2 {
			// A single node has no controller listener to name.
			if n := resp.Nodes[0]; n.NodeID != 1 || len(n.Listeners) != 0 {
				t.Errorf("v2 node %+v, want node 1 without a controller listener", n)
			}
		}
	}
}

// TestDescribeQuorumAnswersOnlyForTheMetadataLog: any other topic or
// partition, or more than one, is UNKNOWN_TOPIC_OR_PARTITION for each
// partition asked for, as Kafka answers.
func TestDescribeQuorumAnswersOnlyForTheMetadataLog(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	for name, asked := range map[string]map[string][]int32{
		"another topic":     {"orders": {0}},
		"another partition": {quorumTopic: {1}},
		"two partitions":    {quorumTopic: {0, 1}},
	} {
		resp := rh.describeQuorum(2, "User:ANONYMOUS", asked)
		n := 0
		for _, rt := range resp.Topics {
			for _, p := range rt.Partitions {
				n++
				if p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.ErrorMessage == nil || p.LeaderID != -1 {
					t.Errorf("%s: %s-%d answered %+v", name, rt.Topic, p.Partition, p)
				}
			}
		}
		if want := len(asked[quorumTopic]) + len(asked["orders"]); resp.ErrorCode != 0 || n != want {
			t.Errorf("%s: top-level %d, %d partitions answered, want %d", name, resp.ErrorCode, n, want)
		}
	}
	if resp := rh.describeQuorum(2, "User:ANONYMOUS", nil); resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Errorf("no topics: %+v", resp)
	}
}

// TestDescribeQuorumNeedsDescribeOnCluster: a principal without DESCRIBE
// on the cluster is refused; a super user is served.
func TestDescribeQuorumNeedsDescribeOnCluster(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	if resp := rh.describeQuorum(2, "User:mallory", theQuorum); resp.ErrorCode != clusterDenied || len(resp.Topics) != 0 {
		t.Errorf("denied: %+v", resp)
	}
	if resp := rh.describeQuorum(2, "User:admin", theQuorum); resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].LeaderID != 1 {
		t.Errorf("super user: %+v", resp)
	}
}
