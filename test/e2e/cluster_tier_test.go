package e2e

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-broker/strata/internal/config"
)

// tieredClusterTopicConfigs make a topic tier every rolled 16 KiB segment
// and keep about one locally.
var tieredClusterTopicConfigs = map[string]*string{
	"remote.storage.enable": kadm.StringPtr("true"),
	"local.retention.bytes": kadm.StringPtr("20000"),
	"retention.bytes":       kadm.StringPtr("-1"),
	"min.insync.replicas":   kadm.StringPtr("2"),
}

// TestClusterTieredSharedStore runs a tiered topic on a cluster whose nodes
// share one directory store (strata.remote.dir): see
// checkClusterTieredFailover.
func TestClusterTieredSharedStore(t *testing.T) {
	t.Parallel()
	checkClusterTieredFailover(t, "strata.remote.dir="+t.TempDir())
}

// TestClusterTieredS3 is TestClusterTieredSharedStore with the three nodes
// tiering to one S3 bucket (versitygw). Not parallel: the nodes inherit the
// bucket's credentials from the test's environment.
func TestClusterTieredS3(t *testing.T) {
	s3, _ := s3Bucket(t, "strata-cluster")
	checkClusterTieredFailover(t, s3...)
}

// checkClusterTieredFailover starts three nodes tiering to the shared store
// that store names: the leader of a tiered topic uploads rolled segments,
// every replica deletes its local copies of them, and after the leader is
// killed the new leader serves every record from the start, the old ones
// from what the old leader wrote to the store. Before that, a consumer in
// a follower's rack reads every record from that follower (KIP-392), the
// tiered ones through the follower's remote reads.
func checkClusterTieredFailover(t *testing.T, store ...string) {
	c := startCluster(t, 3, append([]string{"log.segment.bytes=16384",
		"remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200",
		"broker.rack=rack-{node}", "replica.selector.class=" + config.RackAwareReplicaSelector}, store...)...)
	adm := c.newAdmin()
	const topic = "cluster-tiered"
	c.createTopic(adm, topic, 1, 3, tieredClusterTopicConfigs)
	leader := c.waitISR(adm, topic, 3)[0].Leader

	cl := c.newClient(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	values := make([][]byte, 300)
	for i := range values {
		values[i] = make([]byte, 1000)
		rand.Read(values[i])
		produceSync(t, cl, &kgo.Record{Value: values[i]})
	}
	waitTiered(t, c.Node(leader).Addr, topic)
	// Every replica, followers too, drops its local copies of what was
	// tiered: its first local segment moves past 0.
	deadline := time.Now().Add(clusterSettleTimeout)
	for _, id := range c.ids() {
		dir := filepath.Join(c.Node(id).Dir, topic+"-0")
		for firstSegmentBase(t, dir) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("node %d still holds the segment at offset 0 in %s after the tier uploaded it", id, dir)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	follower := leader%3 + 1
	reads := &readsFrom{batches: map[int32]int{}}
	near := c.newClient(kgo.Rack("rack-"+strconv.Itoa(int(follower))), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(reads))
	for i, v := range consumeValues(t, near, len(values), 30*time.Second) {
		if v != string(values[i]) {
			t.Fatalf("reading from follower %d: record %d differs from what was produced", follower, i)
		}
	}
	near.Close()
	if by := reads.snapshot(); len(by) != 1 || by[follower] < len(values) {
		t.Fatalf("records read by node: %v; want all from node %d, the follower in the consumer's rack", by, follower)
	}

	c.Node(leader).Kill()
	successor := c.leaderOf(adm, topic, 0, leader)
	t.Logf("killed node %d, the leader; node %d leads now", leader, successor)
	// Back in the ISR (leadership stays: the preferred election is minutes
	// away), so that no client is sent to the dead node.
	c.Node(leader).Restart()
	if now := c.waitISR(adm, topic, 3)[0].Leader; now != successor {
		t.Fatalf("node %d leads again, not node %d", now, successor)
	}
	c.waitOffsetsAvailable(adm, topic)
	checkAll(t, c.Node(successor).Addr, topic, values)
}

// TestClusterTierNeedsSharedStore: cluster members with the default store
// (a directory in each node's data dir, which no other node sees) run
// without the tier, and a tiered topic is refused with INVALID_CONFIG
// naming the fix; an untiered one is created as usual.
func TestClusterTierNeedsSharedStore(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	resp, err := adm.CreateTopic(testContext(t, 30*time.Second), 1, 3, tieredClusterTopicConfigs, "refused-tiered")
	if err == nil {
		err = resp.Err
	}
	if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(resp.ErrMessage, "strata.remote.s3.bucket") {
		t.Fatalf("creating a tiered topic: %v (%q), want INVALID_CONFIG naming strata.remote.s3.bucket", err, resp.ErrMessage)
	}
	c.createTopic(adm, "untiered", 1, 3, nil)
}

// firstSegmentBase is the base offset of the first segment in a partition
// directory (its .log files are named by 20-digit base offsets).
func firstSegmentBase(t *testing.T, dir string) int64 {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no segment in %s: %v", dir, err)
	}
	slices.Sort(logs)
	base, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(logs[0]), ".log"), 10, 64)
	if err != nil {
		t.Fatalf("segment file %s: %v", logs[0], err)
	}
	return base
}

// TestClusterTieredReassignBootstrapsFromTier moves a tiered partition
// onto a node that never held it, with follower.fetch.last.tiered.offset.
// enable (KIP-1023, reference 004, across processes): the new replica
// starts at the leader's earliest pending upload instead of fetching what
// the tier holds, joins the ISR, the reassignment completes, and once the
// old leader is killed the new replica leads and serves every record from
// the log start, the old ones from the shared store.
func TestClusterTieredReassignBootstrapsFromTier(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, "strata.remote.dir="+t.TempDir(), "log.segment.bytes=16384",
		"remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200",
		"follower.fetch.last.tiered.offset.enable=true")
	adm := c.newAdmin()
	const topic = "cluster-tiered-moving"
	configs := maps.Clone(tieredClusterTopicConfigs)
	configs["min.insync.replicas"] = kadm.StringPtr("1")
	c.createTopic(adm, topic, 1, 2, configs)
	before := c.waitISR(adm, topic, 2)[0]
	newcomer := slices.IndexFunc(c.ids(), func(id int32) bool { return !slices.Contains(before.Replicas, id) })
	target := []int32{before.Leader, c.ids()[newcomer]}

	cl := c.newClient(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var values [][]byte
	produceRandom(t, cl, 300, 1000, &values)
	// Every rolled segment tiered: the earliest pending upload stays put.
	waitRolledTiered(t, c.Node(before.Leader).Addr, topic, newSegmentSizes(filepath.Join(c.Node(before.Leader).Dir, topic+"-0")))
	pending := listOffsetAt(t, c.Node(before.Leader).Addr, topic, -6)

	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, 0, target)
	resp, err := adm.AlterPartitionAssignments(testContext(t, 30*time.Second), req)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("reassigning %s-0 from %v to %v: %v", topic, before.Replicas, target, err)
	}
	c.waitPartitions(adm, topic, fmt.Sprintf("replicas and ISR %v", target), func(p partitionState) bool {
		return slices.Equal(p.Replicas, target) && slices.Equal(sorted(p.ISR), sorted(target))
	})
	dir := filepath.Join(c.Node(target[1]).Dir, topic+"-0")
	if first := firstSegmentBase(t, dir); first == 0 || first > pending {
		t.Fatalf("node %d's replica starts at offset %d; want the leader's earliest pending upload %d, not 0",
			target[1], first, pending)
	}
	t.Logf("moved %s-0 from %v to %v; node %d's replica starts at %d (earliest pending upload %d)",
		topic, before.Replicas, target, target[1], firstSegmentBase(t, dir), pending)

	c.Node(target[0]).Kill()
	if now := c.leaderOf(adm, topic, 0, target[0]); now != target[1] {
		t.Fatalf("node %d leads, want node %d", now, target[1])
	}
	c.waitOffsetsAvailable(adm, topic)
	checkAll(t, c.Node(target[1]).Addr, topic, values)
	c.Node(target[0]).Restart()
}
