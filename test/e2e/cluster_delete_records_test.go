package e2e

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterDeleteRecordsReachesEveryReplica: DeleteRecords is answered
// once every live replica has moved its log start (Kafka's
// DelayedDeleteRecords), so a leader killed right after the answer leaves
// a successor whose earliest offset is already past the deleted records:
// no failover brings them back. With a follower dead but not yet fenced,
// the request times out (REQUEST_TIMED_OUT); once the controller has
// fenced it, it no longer counts, and the request succeeds.
func TestClusterDeleteRecordsReachesEveryReplica(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic = "cluster-delete-records"
	c.createTopic(adm, topic, 1, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")})
	c.waitISR(adm, topic, 3)
	cl := c.newClient(kgo.DefaultProduceTopic(topic))
	for i := range 200 {
		produceSync(t, cl, &kgo.Record{Value: []byte(value("deleted", i))})
	}

	for _, before := range []int64{50, 100} {
		leader := c.waitISR(adm, topic, 3)[0].Leader
		if low := deleteRecordsBefore(t, c, leader, topic, before, 30*time.Second); low < before {
			t.Fatalf("DeleteRecords before %d answered low watermark %d", before, low)
		}
		c.Node(leader).Kill()
		successor := c.leaderOf(adm, topic, 0, leader)
		c.waitOffsetsAvailable(adm, topic)
		if got := listOffsetAt(t, c.Node(successor).Addr, topic, -2); got < before {
			t.Fatalf("node %d, leading after node %d was killed, starts at offset %d: the records below %d, deleted, are back", successor, leader, got, before)
		}
		c.Node(leader).Restart()
		c.waitBrokers(c.ids()...)
	}

	// A follower dies: until the controller fences it, it still counts,
	// and its log start never moves.
	parts := c.waitISR(adm, topic, 3)
	leader := parts[0].Leader
	var follower int32
	for _, r := range parts[0].Replicas {
		if r != leader {
			follower = r
		}
	}
	c.Node(follower).Kill()
	if code := deleteRecordsCode(t, c, leader, topic, 150, 300*time.Millisecond); !errors.Is(kerr.ErrorForCode(code), kerr.RequestTimedOut) {
		t.Fatalf("DeleteRecords with follower %d dead but not fenced: %v, want REQUEST_TIMED_OUT", follower, kerr.ErrorForCode(code))
	}
	c.waitBrokers(without(c.ids(), follower)...)
	if low := deleteRecordsBefore(t, c, leader, topic, 150, 30*time.Second); low < 150 {
		t.Fatalf("DeleteRecords before 150 with follower %d fenced answered low watermark %d", follower, low)
	}
	c.Node(follower).Restart()
	c.waitBrokers(c.ids()...)
}

// without is ids without the ones in drop.
func without(ids []int32, drop ...int32) []int32 {
	var out []int32
	for _, i := range ids {
		if !slices.Contains(drop, i) {
			out = append(out, i)
		}
	}
	return out
}

// deleteRecordsBefore sends DeleteRecords for partition 0 of topic, with
// the given timeout, to node id, which must lead it, and returns the low
// watermark it answered; any error fails the test.
func deleteRecordsBefore(t *testing.T, c *Cluster, id int32, topic string, before int64, timeout time.Duration) int64 {
	t.Helper()
	resp := deleteRecords(t, c, id, topic, before, timeout)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("DeleteRecords before %d of %s/0 at node %d: %v", before, topic, id, err)
	}
	return resp.LowWatermark
}

// deleteRecordsCode is deleteRecordsBefore's error code.
func deleteRecordsCode(t *testing.T, c *Cluster, id int32, topic string, before int64, timeout time.Duration) int16 {
	t.Helper()
	return deleteRecords(t, c, id, topic, before, timeout).ErrorCode
}

// deleteRecords sends the request to node id itself, without the
// client's routing and retries.
func deleteRecords(t *testing.T, c *Cluster, id int32, topic string, before int64, timeout time.Duration) kmsg.DeleteRecordsResponseTopicPartition {
	t.Helper()
	cl := newClient(t, c.Node(id).Addr)
	defer cl.Close()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = int32(timeout.Milliseconds())
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = before
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Broker(int(id)).Request(testContext(t, timeout+10*time.Second), req)
	if err != nil {
		t.Fatalf("DeleteRecords before %d of %s/0 at node %d: %v", before, topic, id, err)
	}
	return kresp.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
}
