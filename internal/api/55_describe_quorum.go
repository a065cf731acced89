package api

import (
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// DescribeQuorum: v0-2 (v1 adds the replicas' fetch and caught-up times,
// v2 error messages and the nodes' listeners). The metadata quorum as its
// controller sees it, asked of the controller by any broker, as Kafka's
// brokers forward it; `kafka-metadata-quorum --bootstrap-server` and the
// admin clients' describeMetadataQuorum read it. Needs DESCRIBE on the
// cluster. A v2 replica carries its log directory id (its voter key for
// AddRaftVoter and RemoveRaftVoter). Offsets are metadata versions (the Raft index of the newest
// command a node has applied); a replica's times are those of its latest
// heartbeat, -1 before the controller has heard one. The only partition is
// __cluster_metadata-0, as in Kafka; anything else is
// UNKNOWN_TOPIC_OR_PARTITION. A v2 answer's nodes are the voters, each
// with its controller address (the listener a new node's
// controller.quorum.bootstrap.servers names), as Kafka's, on whichever
// listener it is asked; a single node has no controller listener, so none.
func init() { register(55, 0, 2, (*Handler).handleDescribeQuorum) }

// quorumTopic is the name Kafka gives the metadata log.
const quorumTopic = "__cluster_metadata"

func (h *Handler) handleDescribeQuorum(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeQuorumRequest)
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !h.allowedCluster(req, acl.OpDescribe) {
		resp.ErrorCode = clusterDenied
		return done(resp)
	}
	if !asksForTheQuorum(r) {
		resp.Topics = quorumPartitionErrors(r, kerr.UnknownTopicOrPartition.Code,
			"the metadata quorum is partition 0 of "+quorumTopic+", the only one DescribeQuorum answers for")
		return done(resp)
	}
	q, err := h.opts.Meta.DescribeQuorum(ctx)
	if err != nil {
		code, msg := quorumErrorCode(err)
		resp.Topics = quorumPartitionErrors(r, code, msg)
		return done(resp)
	}
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = q.LeaderID, q.LeaderEpoch, q.HighWatermark
	img := h.opts.Meta.Image()
	p.CurrentVoters = replicaStates(q.Voters, img)
	p.Observers = replicaStates(q.Observers, img)
	t := kmsg.NewDescribeQuorumResponseTopic()
	t.Topic = quorumTopic
	t.Partitions = []kmsg.DescribeQuorumResponseTopicPartition{p}
	resp.Topics = []kmsg.DescribeQuorumResponseTopic{t}
	if r.Version >= 2 {
		resp.Nodes = h.quorumNodes(q)
	}
	return done(resp)
}

// asksForTheQuorum is Kafka's check: one topic, the metadata log, with one
// partition, 0.
func asksForTheQuorum(r *kmsg.DescribeQuorumRequest) bool {
	return len(r.Topics) == 1 && r.Topics[0].Topic == quorumTopic &&
		len(r.Topics[0].Partitions) == 1 && r.Topics[0].Partitions[0].Partition == 0
}

// quorumPartitionErrors answers every partition asked for with code.
func quorumPartitionErrors(r *kmsg.DescribeQuorumRequest, code int16, msg string) []kmsg.DescribeQuorumResponseTopic {
	out := make([]kmsg.DescribeQuorumResponseTopic, 0, len(r.Topics))
	for _, rt := range r.Topics {
		t := kmsg.NewDescribeQuorumResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewDescribeQuorumResponseTopicPartition()
			p.Partition, p.ErrorCode, p.ErrorMessage = rp.Partition, code, strPtr(msg)
			p.LeaderID, p.LeaderEpoch, p.HighWatermark = -1, -1, -1
			t.Partitions = append(t.Partitions, p)
		}
		out = append(out, t)
	}
	return out
}

// quorumErrorCode maps a failure to reach the controller to Kafka's answer
// from a node that is not the quorum's leader, which clients retry.
func quorumErrorCode(err error) (int16, string) {
	switch {
	case errors.Is(err, metadata.ErrNotController), errors.Is(err, metadata.ErrClosed):
		return kerr.NotLeaderForPartition.Code, err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code, err.Error()
	}
	return errorCode(err)
}

// replicaStates lists rs, each (v2) with its registered log directory id:
// the directory id AddRaftVoter and RemoveRaftVoter name.
func replicaStates(rs []metadata.QuorumReplica, img *metadata.Image) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(rs))
	for _, r := range rs {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID, s.LogEndOffset = r.NodeID, r.LogEndOffset
		if b, ok := img.Brokers[r.NodeID]; ok {
			s.ReplicaDirectoryID = b.LogDir
		}
		s.LastFetchTimestamp, s.LastCaughtUpTimestamp = r.LastFetchMs, r.LastCaughtUpMs
		out = append(out, s)
	}
	return out
}

// quorumNodes lists the voters of q, each with its controller address
// (named by this node's controller listener name), as Kafka lists them;
// on a single node, which has no controller listener, without one.
func (h *Handler) quorumNodes(q metadata.QuorumState) []kmsg.DescribeQuorumResponseNode {
	addrs := map[int32]string{}
	for _, c := range h.opts.Meta.Controllers() {
		addrs[c.NodeID] = c.Addr
	}
	out := make([]kmsg.DescribeQuorumResponseNode, 0, len(q.Voters))
	for _, r := range q.Voters {
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = r.NodeID
		if addr, ok := splitAddress(addrs[r.NodeID]); ok {
			l := kmsg.NewDescribeQuorumResponseNodeListener()
			l.Name, l.Host, l.Port = h.opts.Config.ControllerListenerName, addr.Host, uint16(addr.Port)
			n.Listeners = append(n.Listeners, l)
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b kmsg.DescribeQuorumResponseNode) int { return int(a.NodeID) - int(b.NodeID) })
	return out
}
