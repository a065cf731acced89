package e2e

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requireQuorumDescribed asks node ask for the metadata quorum
// (DescribeQuorum v2, as `kafka-metadata-quorum --bootstrap-server` does)
// until the controller has heard every node: each is a voter, the leader is
// one of them, every voter has applied metadata and has
// a heartbeat time, and each node is listed with its controller listener.
func (c *Cluster) requireQuorumDescribed(ask int32) {
	t := c.t
	t.Helper()
	cl := newClient(t, c.Node(ask).Addr)
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		err := quorumDescribedBy(c, cl)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("DescribeQuorum through node %d: %v", ask, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// describeQuorum sends DescribeQuorum v2 for the metadata log and returns
// the answer and its one partition.
func describeQuorum(ctx context.Context, cl kmsg.Requestor) (*kmsg.DescribeQuorumResponse, kmsg.DescribeQuorumResponseTopicPartition, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, kmsg.DescribeQuorumResponseTopicPartition{}, err
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, kmsg.DescribeQuorumResponseTopicPartition{}, fmt.Errorf("answered error %d with %d topics", resp.ErrorCode, len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return nil, p, fmt.Errorf("partition error %d: %v", p.ErrorCode, p.ErrorMessage)
	}
	return resp, p, nil
}

func quorumDescribedBy(c *Cluster, cl *kgo.Client) error {
	resp, p, err := describeQuorum(testContext(c.t, 10*time.Second), cl)
	if err != nil {
		return err
	}
	if p.LeaderID < 1 || int(p.LeaderID) > len(c.Nodes) || p.LeaderEpoch < 1 {
		return fmt.Errorf("leader %d in epoch %d, want one of the nodes", p.LeaderID, p.LeaderEpoch)
	}
	if len(p.CurrentVoters) != len(c.Nodes) || len(p.Observers) != 0 {
		return fmt.Errorf("voters %+v, observers %+v, want the %d nodes as voters", p.CurrentVoters, p.Observers, len(c.Nodes))
	}
	for i, v := range p.CurrentVoters {
		if v.ReplicaID != int32(i+1) || v.LogEndOffset < 1 || v.LogEndOffset > p.HighWatermark || v.LastFetchTimestamp < 0 || v.LastCaughtUpTimestamp < 0 {
			return fmt.Errorf("voter %+v (high watermark %d)", v, p.HighWatermark)
		}
	}
	if len(resp.Nodes) != len(c.Nodes) {
		return fmt.Errorf("nodes %+v", resp.Nodes)
	}
	// Each voter at its controller listener, as Kafka lists them: where a
	// new node's controller.quorum.bootstrap.servers points.
	for _, n := range resp.Nodes {
		want := c.Node(n.NodeID).Listeners[controllerListener]
		if len(n.Listeners) != 1 || n.Listeners[0].Name != controllerListener || fmt.Sprintf("%s:%d", n.Listeners[0].Host, n.Listeners[0].Port) != want {
			return fmt.Errorf("node %d listeners %+v, want %s at %s", n.NodeID, n.Listeners, controllerListener, want)
		}
	}
	return nil
}
