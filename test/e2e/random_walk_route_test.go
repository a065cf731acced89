package e2e

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// walkRoute is where a request goes: to the coordinator of a group
// (coordinator 0) or of a transactional id (1), both named by key, to the
// leader of a partition of topic key, or (coordinator and partition -1)
// to any node.
type walkRoute struct {
	coordinator int8
	key         string
	partition   int32
}

var anyNode = walkRoute{coordinator: -1, partition: -1}

func groupRoute(group string) walkRoute { return walkRoute{coordinator: 0, key: group, partition: -1} }
func txnRoute(id string) walkRoute      { return walkRoute{coordinator: 1, key: id, partition: -1} }
func leaderRoute(topic string, p int32) walkRoute {
	return walkRoute{coordinator: -1, key: topic, partition: p}
}

// routeOf is where a client sends req, by what it holds before any
// mutation: group requests to the group's coordinator, transactional ones
// to the transaction's, a Produce to its partition's leader, share
// fetches and acknowledgements and fetches to the leader of the walker's
// home partition (shareMember and fetchWalker ask only for the partitions
// that node leads).
func (w *walker) routeOf(req kmsg.Request) walkRoute {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		return groupRoute(r.Group)
	case *kmsg.SyncGroupRequest:
		return groupRoute(r.Group)
	case *kmsg.HeartbeatRequest:
		return groupRoute(r.Group)
	case *kmsg.LeaveGroupRequest:
		return groupRoute(r.Group)
	case *kmsg.OffsetCommitRequest:
		return groupRoute(r.Group)
	case *kmsg.OffsetFetchRequest:
		return groupRoute(r.Group)
	case *kmsg.DescribeGroupsRequest:
		return groupRoute(r.Groups[0])
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return groupRoute(r.Group)
	case *kmsg.ConsumerGroupDescribeRequest:
		return groupRoute(r.Groups[0])
	case *kmsg.ShareGroupHeartbeatRequest:
		return groupRoute(r.GroupID)
	case *kmsg.ShareGroupDescribeRequest:
		return groupRoute(r.GroupIDs[0])
	case *kmsg.TxnOffsetCommitRequest:
		return groupRoute(r.Group)
	case *kmsg.InitProducerIDRequest:
		if r.TransactionalID != nil {
			return txnRoute(*r.TransactionalID)
		}
	case *kmsg.AddPartitionsToTxnRequest:
		return txnRoute(r.TransactionalID)
	case *kmsg.AddOffsetsToTxnRequest:
		return txnRoute(r.TransactionalID)
	case *kmsg.EndTxnRequest:
		return txnRoute(r.TransactionalID)
	case *kmsg.DescribeTransactionsRequest:
		return txnRoute(r.TransactionalIDs[0])
	case *kmsg.ProduceRequest:
		return leaderRoute(r.Topics[0].Topic, r.Topics[0].Partitions[0].Partition)
	case *kmsg.DeleteRecordsRequest:
		return leaderRoute(r.Topics[0].Topic, r.Topics[0].Partitions[0].Partition)
	case *kmsg.DeleteGroupsRequest:
		return groupRoute(r.Groups[0])
	case *kmsg.OffsetDeleteRequest:
		return groupRoute(r.Group)
	case *kmsg.ShareFetchRequest, *kmsg.ShareAcknowledgeRequest, *kmsg.FetchRequest:
		return leaderRoute(walkTopic, w.home)
	}
	return anyNode
}

// resolve is the node for route: the only one, the one found last time,
// or the one FindCoordinator or Metadata names now (nil when none does).
func (w *walker) resolve(route walkRoute) *Broker {
	if len(w.env.nodes) == 1 {
		return w.env.nodes[0]
	}
	if b := w.routes[route]; b != nil {
		return b
	}
	var b *Broker
	switch {
	case route.coordinator >= 0:
		b = w.env.coordinator(w.t, route.coordinator, route.key)
	case route.partition >= 0:
		b = w.env.leaders(w.t, route.key)[route.partition]
	default:
		b = w.env.nodes[w.rng.IntN(len(w.env.nodes))]
	}
	if b != nil {
		w.routes[route] = b
	}
	return b
}

// homePartitions are the partitions of the walk topic led by the leader
// of the walker's home partition: what one share session on that node
// can fetch.
// It is looked up once per walker.
func (w *walker) homePartitions() []int32 {
	if w.homeParts != nil {
		return w.homeParts
	}
	w.homeParts = []int32{}
	leaders := w.env.leaders(w.t, walkTopic)
	for p := range int32(walkPartitions) {
		if len(w.env.nodes) == 1 || leaders[p] != nil && leaders[p] == leaders[w.home] {
			w.homeParts = append(w.homeParts, p)
		}
	}
	return w.homeParts
}

// coordinator is the node FindCoordinator names for key, or nil.
func (env *walkEnv) coordinator(t *testing.T, keyType int8, key string) *Broker {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey, req.CoordinatorKeys, req.CoordinatorType = key, []string{key}, keyType
	resp, err := req.RequestWith(testContext(t, 10*time.Second), env.cl)
	switch {
	case err != nil:
		return nil
	case len(resp.Coordinators) > 0:
		c := resp.Coordinators[0]
		return env.nodeAt(c.Host, c.Port)
	}
	return env.nodeAt(resp.Host, resp.Port)
}

// leaders is the node leading each partition of topic, as Metadata says
// now (a partition without a leader is not in it).
func (env *walkEnv) leaders(t *testing.T, topic string) map[int32]*Broker {
	out := map[int32]*Broker{}
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testContext(t, 10*time.Second), env.cl)
	if err != nil || len(resp.Topics) == 0 {
		return out
	}
	addrs := map[int32]*Broker{}
	for _, b := range resp.Brokers {
		addrs[b.NodeID] = env.nodeAt(b.Host, b.Port)
	}
	for _, p := range resp.Topics[0].Partitions {
		if b := addrs[p.Leader]; b != nil {
			out[p.Partition] = b
		}
	}
	return out
}

// nodeAt is the node listening at host:port, or nil.
func (env *walkEnv) nodeAt(host string, port int32) *Broker {
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	for _, b := range env.nodes {
		if b.Addr == addr {
			return b
		}
	}
	return nil
}

// awaitCoordinators asks FindCoordinator for each key of a type (0 a
// group, 1 a transactional id) until it names one: the first asks create
// the internal topic that holds their state.
func awaitCoordinators(t *testing.T, cl *kgo.Client, keyType int8, keys ...string) {
	t.Helper()
	ctx := testContext(t, 30*time.Second)
	for _, key := range keys {
		coordinatorOf(t, ctx, cl, keyType, key)
	}
}

// coordinatorOf is the node FindCoordinator names for a key of a type,
// asked again until the answer carries no error.
func coordinatorOf(t *testing.T, ctx context.Context, cl *kgo.Client, keyType int8, key string) int32 {
	t.Helper()
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys, req.CoordinatorType = key, []string{key}, keyType
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("FindCoordinator of %s: %v", key, err)
		}
		if !hasErrorCode(resp) {
			if len(resp.Coordinators) > 0 {
				return resp.Coordinators[0].NodeID
			}
			return resp.NodeID
		}
		time.Sleep(walkBackoff)
	}
}
