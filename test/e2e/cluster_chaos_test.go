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
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// chaosRoundsDefault is how many faults TestClusterChaos injects in a plain
// test run; E2E_CHAOS_ROUNDS sets another count (a long soak locally).
const chaosRoundsDefault = 4

// faultKind is how a chaos fault takes a node down.
type faultKind int

const (
	faultStop  faultKind = iota // SIGTERM (a controlled shutdown), then a restart
	faultKill                   // SIGKILL, then a restart
	faultPause                  // SIGSTOP, then SIGCONT: the process resumes where it was
)

// chaosFault is one fault of TestClusterChaos: what it does to which nodes.
type chaosFault struct {
	kind  faultKind
	nodes []int32 // the nodes it takes down, at once
	down  time.Duration
}

func (f chaosFault) String() string {
	how := [...]string{faultStop: "SIGTERM", faultKill: "SIGKILL", faultPause: "SIGSTOP/SIGCONT"}[f.kind]
	return fmt.Sprintf("%s to node(s) %v, down %v", how, f.nodes, f.down)
}

// drawChaosFault picks the next fault: one node killed or stopped, or (one
// round in four) two nodes killed at once, which takes the metadata quorum's
// majority and every partition's min.insync.replicas away until they are
// back. Down times are short, up to 1.5 s, so that a killed node often comes
// back before the controller fenced it. One round in five instead pauses a
// node for longer than broker.session.timeout.ms (3 s here): the cluster
// fences it and moves its leaderships, and then it resumes, a leader that
// has not heard it was replaced (a zombie), as after a long GC pause or a
// network partition.
func drawChaosFault(rng *rand.Rand, nodes int32) chaosFault {
	first := 1 + rng.Int32N(nodes)
	if rng.IntN(5) == 0 {
		return chaosFault{kind: faultPause, nodes: []int32{first}, down: 3500*time.Millisecond + time.Duration(rng.IntN(1500))*time.Millisecond}
	}
	f := chaosFault{kind: faultStop, nodes: []int32{first}, down: time.Duration(rng.IntN(1500)) * time.Millisecond}
	if rng.IntN(3) > 0 {
		f.kind = faultKill
	}
	if rng.IntN(4) == 0 {
		f.kind = faultKill
		f.nodes = append(f.nodes, 1+(first+rng.Int32N(nodes-1))%nodes)
	}
	return f
}

// runChaos injects rounds faults drawn from rng into c, one at a time.
// Each round runs before (which may act, e.g. start a reassignment, and
// describes the workload for the round's log line), stops the fault's
// nodes, waits its down time and restarts them, waits until every node is
// registered again, then runs settle, which waits until the workload has
// recovered (replicas back in sync, progress made).
func (c *Cluster) runChaos(t *testing.T, rng *rand.Rand, rounds int, before func() string, settle func()) {
	t.Helper()
	for round := range rounds {
		f := drawChaosFault(rng, int32(len(c.Nodes)))
		t.Logf("round %d: %v, with %s", round, f, before())
		for _, id := range f.nodes {
			switch f.kind {
			case faultKill:
				c.Node(id).Kill()
			case faultStop:
				c.Node(id).Stop()
			case faultPause:
				c.Node(id).signal(syscall.SIGSTOP)
			}
		}
		time.Sleep(f.down)
		for _, id := range f.nodes {
			if f.kind == faultPause {
				c.Node(id).signal(syscall.SIGCONT)
			} else {
				c.Node(id).Restart()
			}
		}
		c.waitBrokers(c.ids()...)
		settle()
	}
}

// waitAllInSync waits until every partition of each topic has a leader
// and every replica in its ISR, and returns the last topic's partitions.
func (c *Cluster) waitAllInSync(adm *kadm.Client, topics ...string) map[int32]partitionState {
	c.t.Helper()
	var last map[int32]partitionState
	for _, topic := range topics {
		last = c.waitPartitions(adm, topic, "every replica in the ISR", func(p partitionState) bool {
			return p.Leader >= 1 && len(p.ISR) == len(p.Replicas)
		})
	}
	return last
}

// chaosSeed returns the rounds (E2E_CHAOS_ROUNDS) and a generator seeded
// from E2E_CHAOS_SEED or the clock, and logs the seed for a replay.
func chaosSeed(t *testing.T) (int, *rand.Rand) {
	t.Helper()
	rounds := envInt(t, "E2E_CHAOS_ROUNDS", chaosRoundsDefault)
	seed := uint64(envInt(t, "E2E_CHAOS_SEED", int(time.Now().UnixNano()&0x7fffffff)))
	t.Logf("chaos: %d rounds, seed %d (E2E_CHAOS_SEED=%d replays it)", rounds, seed, seed)
	return rounds, rand.New(rand.NewPCG(seed, seed))
}

// TestClusterChaos injects a sequence of random faults into a three-node
// cluster while an idempotent acks=all producer writes to a topic with
// replication factor 3 and min.insync.replicas 2, two consumer groups (a
// classic one and a consumer-protocol one) read it, and two transactional
// producers write transactions (committing most,
// aborting some) to another such topic: nodes killed with SIGKILL or stopped with SIGTERM, one or two at once,
// restarted after a short random time. After each fault the test waits until
// every node is back in every ISR and the producer got further. Then:
//   - every acknowledged record is in the log exactly once, in the order it
//     was acknowledged, and nothing is duplicated or reordered;
//   - each group read to the end and the broker returns the offsets it
//     committed;
//   - read committed, every transaction is all or nothing, every one whose
//     commit was acknowledged is there and none whose abort was;
//   - once every node is stopped, the three replicas of each partition hold
//     the same batches (offsets, CRC, leader epoch), read from the segment
//     files with `strata inspect segment`.
//
// The acked producer's topic is tiered to a directory all nodes share.
//
// The seed is logged; E2E_CHAOS_SEED replays a run and E2E_CHAOS_ROUNDS
// makes it longer.
func TestClusterChaos(t *testing.T) {
	t.Parallel()
	rounds, rng := chaosSeed(t)

	c := startCluster(t, 3, "offsets.topic.num.partitions=3", "transaction.state.log.num.partitions=3",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms=200",
		"strata.remote.dir="+t.TempDir(), "remote.log.manager.task.interval.ms=200", "log.retention.check.interval.ms=200")
	adm := c.newAdmin()
	const topic, txnTopic, partitions, group = "chaos", "chaos-txn", 3, "chaos-group"
	// The acknowledged records go to a tiered topic of small segments, of
	// which each replica keeps about two locally: leaders upload while
	// nodes die, followers drop what was uploaded, and the final read
	// crosses from the shared store to the local log.
	c.createTopic(adm, topic, partitions, 3, map[string]*string{
		"min.insync.replicas":   kadm.StringPtr("2"),
		"segment.bytes":         kadm.StringPtr("16384"),
		"remote.storage.enable": kadm.StringPtr("true"),
		"local.retention.bytes": kadm.StringPtr("32768"),
		"retention.bytes":       kadm.StringPtr("-1"),
	})
	c.createTopic(adm, txnTopic, partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")})
	for _, name := range []string{topic, txnTopic} {
		c.waitISR(adm, name, 3)
	}

	// Enough records for every round, whatever its length: at most 2,000
	// a round at the producer's pace, 100 of which each round waits for.
	p := startAckedProducerUpTo(t, c.newClient(ackedProducerOpts...), topic, partitions, ackedProducerMaxRecords+2000*rounds)
	// A consumer-protocol group (KIP-848) reads too: its coordinator's
	// records reload wherever the group's partition moves.
	consumer, consumer848 := c.startGroupConsumers(group, topic)
	txns := startTxnProducers(t, c.Addrs(), txnTopic, 2, partitions)
	p.waitTotalAcked(t, 100)
	consumer.waitConsumed(t, 1)
	consumer848.waitConsumed(t, 1)
	txns.progress()
	internal := []string{"__consumer_offsets", "__transaction_state"}
	for _, name := range internal {
		c.waitISR(adm, name, 3)
	}

	c.runChaos(t, rng, rounds, func() string {
		return fmt.Sprintf("%d records acknowledged", p.totalAcked())
	}, func() {
		c.waitAllInSync(adm, append([]string{topic, txnTopic}, internal...)...)
		p.waitTotalAcked(t, p.totalAcked()+100)
		txns.progress()
	})
	p.stop(t)
	txns.stop()
	p.check(t, consumeAll(t, c.Node(1).Addr, topic))
	if tiered := listOffsetAt(t, c.Node(1).Addr, topic, -5); tiered < 0 {
		t.Errorf("%s/0: nothing was tiered (last tiered offset %d)", topic, tiered)
	}
	// A fresh admin client: adm may hold connections the restarts closed.
	adm = c.newAdmin()
	txns.check(t, adm, c.Node(1).Addr)
	endOffsets := consumer.checkCommittedAtEnd(t, adm, group, topic, partitions)
	consumer848.checkCommittedAtEnd(t, adm, group+"-848", topic, partitions)

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
		checkReplicasAgree(t, c, fmt.Sprintf("%s-%d", topic, part), endOffsets[part], c.ids())
		checkReplicasAgree(t, c, fmt.Sprintf("%s-%d", txnTopic, part), txnEnds[part], c.ids())
	}
}

// checkReplicasAgree compares one partition's batches on each of its
// replicas (node ids) in a stopped cluster (from `strata inspect segment`
// over its segment files in order), from the highest first offset among
// them (a tiered partition's
// replicas each drop their uploaded segments at their own time): each
// node's batches must reach at least end and be a prefix of the longest,
// by base and last offset, CRC and leader epoch. A node may lag behind the
// others only by batches above end, which no client was told of.
func checkReplicasAgree(t *testing.T, c *Cluster, dir string, end int64, replicas []int32) {
	t.Helper()
	lists := make(map[int32][]batchLine)
	from := int64(0)
	for _, id := range replicas {
		batches := inspectPartition(t, filepath.Join(c.Node(id).Dir, dir))
		if next := batches[len(batches)-1].next; next < end {
			t.Errorf("%s on node %d ends at offset %d, below the end offset %d clients were given", dir, id, next, end)
		}
		lists[id] = batches
		from = max(from, batches[0].base)
	}
	var longest []string
	compared := make(map[int32][]string)
	for id, batches := range lists {
		for _, b := range batches {
			if b.base >= from {
				compared[id] = append(compared[id], b.desc)
			}
		}
		if len(compared[id]) > len(longest) {
			longest = compared[id]
		}
	}
	for id, batches := range compared {
		if !slices.Equal(batches, longest[:len(batches)]) {
			i := 0
			for i < len(batches) && batches[i] == longest[i] {
				i++
			}
			t.Errorf("%s on node %d differs from the longest replica at batch %d from offset %d: %q, against %q", dir, id, i, from, batches[i], longest[i])
		}
	}
	t.Logf("%s: %d batches from offset %d on the longest replica, every replica agrees", dir, len(longest), from)
}

// batchLine is one batch of `strata inspect segment`: its offsets, and
// what replicas must agree on.
type batchLine struct {
	base, next int64
	desc       string // "base-last crc C epoch E"
}

// inspectPartition lists the batches of a partition directory with `strata
// inspect segment`, in offset order; there is at least one.
func inspectPartition(t *testing.T, dir string) []batchLine {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no segment in %s: %v", dir, err)
	}
	slices.Sort(logs) // 20-digit base offsets sort as numbers
	var batches []batchLine
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
			base, berr := strconv.ParseInt(f["baseOffset"], 10, 64)
			last, lerr := strconv.ParseInt(f["lastOffset"], 10, 64)
			if berr != nil || lerr != nil {
				t.Fatalf("%s: %q: offsets do not parse", log, line)
			}
			batches = append(batches, batchLine{base: base, next: last + 1,
				desc: fmt.Sprintf("%d-%d crc %s epoch %s", base, last, f["crc"], f["partitionLeaderEpoch"])})
		}
	}
	if len(batches) == 0 {
		t.Fatalf("no batch in the segments of %s", dir)
	}
	return batches
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
