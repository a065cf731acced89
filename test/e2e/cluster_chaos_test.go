package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// chaosRoundsDefault is how many faults TestClusterChaos injects in a plain
// test run; E2E_CHAOS_ROUNDS sets another count (a long soak locally).
const chaosRoundsDefault = 4

// chaosFault is one fault of TestClusterChaos: what it does to which nodes.
type chaosFault struct {
	kill  bool    // SIGKILL; else SIGTERM (a controlled shutdown)
	nodes []int32 // the nodes it stops, at once
	down  time.Duration
}

func (f chaosFault) String() string {
	how := "SIGTERM"
	if f.kill {
		how = "SIGKILL"
	}
	return fmt.Sprintf("%s to node(s) %v, down %v", how, f.nodes, f.down)
}

// drawChaosFault picks the next fault: one node killed or stopped, or (one
// round in four) two nodes killed at once, which takes the metadata quorum's
// majority and every partition's min.insync.replicas away until they are
// back. Down times are short, up to 1.5 s, so that a killed node often comes
// back before the controller fenced it.
func drawChaosFault(rng *rand.Rand, nodes int32) chaosFault {
	first := 1 + rng.Int32N(nodes)
	f := chaosFault{kill: rng.IntN(3) > 0, nodes: []int32{first}, down: time.Duration(rng.IntN(1500)) * time.Millisecond}
	if rng.IntN(4) == 0 {
		f.kill = true
		f.nodes = append(f.nodes, 1+(first+rng.Int32N(nodes-1))%nodes)
	}
	return f
}

// TestClusterChaos injects a sequence of random faults into a three-node
// cluster while an idempotent acks=all producer writes to a topic with
// replication factor 3 and min.insync.replicas 2, a consumer group reads
// it, and two transactional producers write transactions (committing most,
// aborting some) to another such topic: nodes killed with SIGKILL or stopped with SIGTERM, one or two at once,
// restarted after a short random time. After each fault the test waits until
// every node is back in every ISR and the producer got further. Then:
//   - every acknowledged record is in the log exactly once, in the order it
//     was acknowledged, and nothing is duplicated or reordered;
//   - the group read to the end and the broker returns the offsets it
//     committed;
//   - read committed, every transaction is all or nothing, every one whose
//     commit was acknowledged is there and none whose abort was;
//   - once every node is stopped, the three replicas of each partition hold
//     the same batches (offsets, CRC, leader epoch), read from the segment
//     files with `strata inspect segment`.
//
// The seed is logged; E2E_CHAOS_SEED replays a run and E2E_CHAOS_ROUNDS
// makes it longer.
func TestClusterChaos(t *testing.T) {
	t.Parallel()
	rounds := envInt(t, "E2E_CHAOS_ROUNDS", chaosRoundsDefault)
	seed := uint64(envInt(t, "E2E_CHAOS_SEED", int(time.Now().UnixNano()&0x7fffffff)))
	t.Logf("chaos: %d rounds, seed %d (E2E_CHAOS_SEED=%d replays it)", rounds, seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	c := startCluster(t, 3, "offsets.topic.num.partitions=3", "transaction.state.log.num.partitions=3",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms=200")
	adm := c.newAdmin()
	const topic, txnTopic, partitions, group = "chaos", "chaos-txn", 3, "chaos-group"
	for _, name := range []string{topic, txnTopic} {
		c.createTopic(adm, name, partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")})
		c.waitISR(adm, name, 3)
	}

	// Enough records for every round, whatever its length: at most 2,000
	// a round at the producer's pace, 100 of which each round waits for.
	p := startAckedProducerUpTo(t, c.newClient(ackedProducerOpts...), topic, partitions, ackedProducerMaxRecords+2000*rounds)
	consumer := startGroupConsumer(t, c.newClient(
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitInterval(300*time.Millisecond),
	))
	txns := startTxnProducers(t, c.Addrs(), txnTopic, 2, partitions)
	p.waitTotalAcked(t, 100)
	consumer.waitConsumed(t, 1)
	txns.progress()
	internal := []string{"__consumer_offsets", "__transaction_state"}
	for _, name := range internal {
		c.waitISR(adm, name, 3)
	}

	for round := range rounds {
		f := drawChaosFault(rng, int32(len(c.Nodes)))
		acked := p.totalAcked()
		t.Logf("round %d: %v, with %d records acknowledged", round, f, acked)
		for _, id := range f.nodes {
			if f.kill {
				c.Node(id).Kill()
			} else {
				c.Node(id).Stop()
			}
		}
		time.Sleep(f.down)
		for _, id := range f.nodes {
			c.Node(id).Restart()
		}
		c.waitBrokers(c.ids()...)
		for _, name := range append([]string{topic, txnTopic}, internal...) {
			c.waitISR(adm, name, 3)
		}
		p.waitTotalAcked(t, acked+100)
		txns.progress()
	}
	p.stop(t)
	txns.stop()
	p.check(t, consumeAll(t, c.Node(1).Addr, topic))
	// A fresh admin client: adm may hold connections the restarts closed.
	adm = c.newAdmin()
	txns.check(t, adm, c.Node(1).Addr)
	ends, err := adm.ListEndOffsets(testContext(t, 10*time.Second), topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("listing end offsets of %q: %v / %v", topic, err, ends.Error())
	}
	endOffsets := make(map[int32]int64)
	ends.Each(func(o kadm.ListedOffset) { endOffsets[o.Partition] = o.Offset })
	consumer.waitCaughtUp(t, topic, endOffsets)
	committed := consumer.stop(t)
	fetched, err := adm.FetchOffsets(testContext(t, 10*time.Second), group)
	if err != nil {
		t.Fatalf("fetching the offsets of group %q: %v", group, err)
	}
	for part := range int32(partitions) {
		if o, ok := fetched.Lookup(topic, part); !ok || o.Err != nil || o.At != committed[part] {
			t.Errorf("group %q, %s/%d: the broker returns %+v, the client committed %d", group, topic, part, o, committed[part])
		}
	}

	// Followers fetch what the producer's last records left them within a
	// fetch wait; then every node stops and the replicas must agree.
	txnEnds := make(map[int32]int64)
	for part := range int32(partitions) {
		txnEnds[part] = listedOffsetOf(t, adm, txnTopic, part, false)
	}
	for _, name := range []string{topic, txnTopic} {
		c.waitISR(adm, name, 3)
	}
	time.Sleep(time.Second)
	c.stopAll()
	for part := range int32(partitions) {
		checkReplicasAgree(t, c, fmt.Sprintf("%s-%d", topic, part), endOffsets[part])
		checkReplicasAgree(t, c, fmt.Sprintf("%s-%d", txnTopic, part), txnEnds[part])
	}
}

// checkReplicasAgree compares one partition's batches on every node of a
// stopped cluster: each node's list (base offset, last offset, CRC, leader
// epoch, from `strata inspect segment` over its segment files in order)
// must reach at least end and be a prefix of the longest. A node may lag
// behind the others only by batches above end, which no client was told of.
func checkReplicasAgree(t *testing.T, c *Cluster, dir string, end int64) {
	t.Helper()
	var longest []string
	lists := make(map[int32][]string)
	for _, id := range c.ids() {
		batches, next := inspectPartition(t, filepath.Join(c.Node(id).Dir, dir))
		if next < end {
			t.Errorf("%s on node %d ends at offset %d, below the end offset %d clients were given", dir, id, next, end)
		}
		lists[id] = batches
		if len(batches) > len(longest) {
			longest = batches
		}
	}
	for id, batches := range lists {
		if !slices.Equal(batches, longest[:len(batches)]) {
			i := 0
			for i < len(batches) && batches[i] == longest[i] {
				i++
			}
			t.Errorf("%s on node %d differs from the longest replica at batch %d: %q, against %q", dir, id, i, batches[i], longest[i])
		}
	}
	t.Logf("%s: %d batches on the longest replica, every replica agrees", dir, len(longest))
}

// inspectPartition lists the batches of a partition directory with `strata
// inspect segment`, one "base-last crc epoch" string per batch in offset
// order, and returns the offset after the last.
func inspectPartition(t *testing.T, dir string) (batches []string, next int64) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no segment in %s: %v", dir, err)
	}
	slices.Sort(logs) // 20-digit base offsets sort as numbers
	for _, log := range logs {
		out, err := exec.Command(strataBin, "inspect", "segment", log).CombinedOutput()
		if err != nil {
			t.Fatalf("strata inspect segment %s: %v\n%s", log, err, out)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "baseOffset: ") {
				continue
			}
			f := batchFields(line)
			if f["isvalid"] != "true" {
				t.Fatalf("%s: invalid batch: %s", log, line)
			}
			last, err := strconv.ParseInt(f["lastOffset"], 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", log, line, err)
			}
			batches = append(batches, fmt.Sprintf("%s-%s crc %s epoch %s", f["baseOffset"], f["lastOffset"], f["crc"], f["partitionLeaderEpoch"]))
			next = last + 1
		}
	}
	return batches, next
}

// batchFields parses the "name: value" pairs of one batch line of `strata
// inspect segment`.
func batchFields(line string) map[string]string {
	words := strings.Fields(line)
	out := make(map[string]string, len(words)/2)
	for i := 0; i+1 < len(words); i += 2 {
		out[strings.TrimSuffix(words[i], ":")] = words[i+1]
	}
	return out
}

// envInt is the integer in environment variable name, or def when unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, s)
	}
	return n
}
