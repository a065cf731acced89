package e2e

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// establishWalkGroups gives each walk group its type before the walks
// start. A group id names one type of group at a time, and the first
// request that creates it picks the type; the filler's mutations name the
// walk groups in requests of every type, so without this a mutated request
// that arrives before a group's own members can take its id, and its
// abandoned member outlives the walks: a mutated ConsumerGroupHeartbeat
// took the share group (seed 7098; every share member refused with
// GROUP_ID_NOT_FOUND), a mutated ShareGroupHeartbeat the classic group
// (seed 7230; every JoinGroup refused with INCONSISTENT_GROUP_PROTOCOL),
// as Kafka refuses them. The groups made here stay, empty, until a
// DeleteGroups.
func establishWalkGroups(t *testing.T, cl *kgo.Client, healthTopicID [16]byte) {
	t.Helper()
	ctx := testContext(t, 30*time.Second)
	// The classic groups: an offset committed outside any generation
	// creates an empty classic group that keeps it. Not on the walk
	// topic, whose offsets the walkers commit and fetch.
	for _, group := range []string{walkClassic, walkTxnGroup} {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = randomHealthTopic, healthTopicID // by name below v10
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		askCoordinator(t, ctx, cl, group, req)
	}
	// The consumer and share groups: a member joins and leaves.
	member := walkMember(rand.New(rand.NewPCG(1, 2)))
	for _, epoch := range []int32{0, -1} {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = walkConsumer, member, epoch, 5000
		if epoch == 0 {
			req.SubscribedTopicNames, req.Topics = []string{walkTopic}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		askCoordinator(t, ctx, cl, walkConsumer, req)
	}
	for _, epoch := range []int32{0, -1} {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch = walkShare, member, epoch
		if epoch == 0 {
			req.SubscribedTopicNames = []string{walkTopic}
		}
		askCoordinator(t, ctx, cl, walkShare, req)
	}
}

// askCoordinator sends req to the coordinator FindCoordinator names for
// group at the time, again while the answer says to retry (in a cluster
// the coordinator may still be moving; franz-go would send it once, to its
// cached coordinator), and fails t on any other error code.
func askCoordinator(t *testing.T, ctx context.Context, cl *kgo.Client, group string, req kmsg.Request) kmsg.Response {
	t.Helper()
	for {
		resp, err := cl.Broker(int(coordinatorOf(t, ctx, cl, 0, group))).Request(ctx, req)
		if err == nil && saysRetryLater(resp) {
			time.Sleep(walkBackoff)
			continue
		}
		if err == nil {
			for _, ec := range errorCodes(resp) {
				if err = kerr.ErrorForCode(ec.code); err != nil {
					break
				}
			}
		}
		if err != nil {
			t.Fatalf("%s of group %s: %v", kmsg.NameForKey(req.Key()), group, err)
		}
		return resp
	}
}
