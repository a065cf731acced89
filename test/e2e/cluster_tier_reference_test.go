package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterRollingRestartKeepsTieredWindow is reference 000 as it was
// reported: a routine rolling restart of a three-broker cluster, a tiered
// topic sitting at its retention.bytes cap with local retention following
// the total (-2), and each partition whose leadership moved lost its whole
// copied window on the fresh leader (Kafka counted the local segments as
// local-only on top of the remote ones). Here every node is restarted in
// turn (SIGTERM: a controlled shutdown moves the leadership first) and
// then crashed in turn; after each, the log start must hold for ten tier
// intervals with no new record, every record from it must be readable
// through the new leader, and a round of new records must move it exactly
// as far as keeping >= retention.bytes allows.
func TestClusterRollingRestartKeepsTieredWindow(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, "strata.remote.dir="+t.TempDir(), "log.segment.bytes=16384",
		"remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200")
	adm := c.newAdmin()
	const topic = "cluster-tiered-at-cap"
	c.createTopic(adm, topic, 1, 3, map[string]*string{
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("-2"), // local mirrors the whole window
		"retention.bytes":       kadm.StringPtr("-1"), // set below, once the sizes are known
		"min.insync.replicas":   kadm.StringPtr("2"),
	})
	leader := c.waitISR(adm, topic, 3)[0].Leader
	addr := c.Node(1).Addr
	var values [][]byte
	cl := c.newClient(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceRandom(t, cl, 160, 1000, &values) // ~10 sealed segments of 16 KiB and an active one
	segs := leaderSegments(t, c, topic, leader)
	waitRolledTiered(t, addr, topic, segs)

	bases := segs.basesFrom(0)
	start := bases[len(bases)/2]
	limit := segs.bytesFrom(start)
	setTopicConfig(t, adm, topic, "retention.bytes", fmt.Sprint(limit))
	t.Logf("segments %v, retention.bytes %d, expected log start %d", bases, limit, start)
	waitLogStart(t, addr, topic, segs, start, limit)
	checkFrom(t, addr, topic, values, start)

	for _, crash := range []bool{false, true} {
		for _, id := range c.ids() {
			what := fmt.Sprintf("node %d stopped", id)
			if crash {
				what = fmt.Sprintf("node %d crashed", id)
				c.Node(id).Kill()
			} else {
				c.Node(id).Stop()
			}
			now := c.leaderOf(adm, topic, 0, id)
			c.Node(id).Restart()
			c.waitBrokers(c.ids()...)
			c.waitISR(adm, topic, 3)
			c.waitOffsetsAvailable(adm, topic)
			// The fresh leader, on the unchanged log: a pass that moved
			// the log start fails the test (a slow machine only weakens
			// the check).
			segs = leaderSegments(t, c, topic, now)
			holdLogStart(t, addr, topic, segs, start, limit, 10*200*time.Millisecond)
			checkFrom(t, addr, topic, values, start)
			// A segment's worth more records: retention moves the log
			// start exactly as far as keeping >= retention.bytes allows.
			produceRandom(t, cl, 15, 1000, &values)
			waitRolledTiered(t, addr, topic, segs)
			want := segs.expectedStart(start, limit)
			waitLogStart(t, addr, topic, segs, want, limit)
			checkFrom(t, addr, topic, values, want)
			t.Logf("%s, node %d leads: log start %d -> %d, %d bytes kept (retention.bytes %d)",
				what, now, start, want, segs.bytesFrom(want), limit)
			start = want
		}
	}
}

// leaderSegments returns the segment sizes of topic's partition 0 on node
// id, its leader, once every replica holds the same segments: retention
// decides on the leader's segments, and a new leader's must be the old
// one's for the bound to carry over (replicas roll at the same offsets).
func leaderSegments(t *testing.T, c *Cluster, topic string, id int32) *segmentSizes {
	t.Helper()
	segs := newSegmentSizes(filepath.Join(c.Node(id).Dir, topic+"-0"))
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		segs.refresh(t)
		same := true
		for _, other := range c.ids() {
			o := newSegmentSizes(filepath.Join(c.Node(other).Dir, topic+"-0"))
			o.refresh(t)
			same = same && slices.Equal(o.basesFrom(0), segs.basesFrom(0))
		}
		if same {
			return segs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replicas of %s-0 do not hold the same segments as node %d's %v", topic, id, segs.basesFrom(0))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
