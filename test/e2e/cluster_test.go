package e2e

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterBasics starts three nodes and checks the cluster looks like one
// from any of them: Metadata lists all three brokers, a topic with
// replication factor 3 has every node in every partition's replicas and ISR,
// and what a client that knows only node 3 produces with acks=all a client
// that knows only node 1 reads back, in order.
func TestClusterBasics(t *testing.T) {
	t.Parallel()
	// startCluster waits until each node's Metadata lists all three.
	c := startCluster(t, 3)
	adm := newAdmin(t, c.Node(1).Addr)
	const topic, partitions, perPartition = "cluster-basics", 3, 100
	c.createTopic(adm, topic, partitions, 3, nil)
	parts := c.waitISR(adm, topic, 3)
	for p, s := range parts {
		if !slices.Equal(sorted(s.Replicas), []int32{1, 2, 3}) {
			t.Errorf("partition %d: replicas %v, want [1 2 3]", p, s.Replicas)
		}
	}
	c.requireQuorumDescribed(2)

	producer := newClient(t, c.Node(3).Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	want := make(map[int32][]string)
	var records []*kgo.Record
	for i := range partitions * perPartition {
		r := &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: []byte(value("basics", i))}
		want[r.Partition] = append(want[r.Partition], string(r.Value))
		records = append(records, r)
	}
	produceSync(t, producer, records...)

	got := consumeAll(t, c.Node(1).Addr, topic)
	for p := range int32(partitions) {
		requireOffsetsContiguous(t, got[p], 0)
		var values []string
		for _, r := range got[p] {
			values = append(values, string(r.Value))
		}
		if !slices.Equal(values, want[p]) {
			t.Errorf("partition %d holds %d records %.80v…, want %d %.80v…", p, len(values), values, len(want[p]), want[p])
		}
	}

	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("kcat is not on PATH: skipping its metadata check")
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-b", c.Node(2).Addr, "-L", "-m", "10")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -L: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), " 3 brokers:") {
		t.Errorf("kcat -L does not list 3 brokers:\n%s", out)
	}
	for _, id := range []int32{1, 2, 3} {
		if line := fmt.Sprintf("broker %d at %s", id, c.Node(id).Addr); !strings.Contains(string(out), line) {
			t.Errorf("kcat -L has no %q:\n%s", line, out)
		}
	}
}

// TestClusterLeaderKillNoAckedLoss crashes the leader of a partition with
// SIGKILL while an idempotent acks=all producer writes to every partition of
// a topic with replication factor 3 and min.insync.replicas 2. Another
// in-sync replica must take over and acknowledge what follows; the crashed
// node, restarted, must rejoin every ISR and, made leader again by a
// preferred election, go on. Then every acknowledged record is in the log
// exactly once and, per partition, in the order it was acknowledged.
func TestClusterLeaderKillNoAckedLoss(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	adm := c.newAdmin()
	const topic, partitions = "leader-kill", 3
	c.createTopic(adm, topic, partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")})
	// The victim is partition 0's preferred replica, so that an election
	// can give it the lead back after its restart.
	victim := c.waitPreferredLeaders(adm, topic, 3)[0].Leader

	p := startAckedProducer(t, c.newClient(ackedProducerOpts...), topic, partitions)
	p.waitAcked(t, 0, 200)
	// Flat out while the leader dies, so that it likely holds records its
	// followers have not fetched yet, which its restart must drop.
	p.setPause(0)
	p.waitProduced(t, p.producedCount()+300)
	ackedAtKill := p.ackedCount(0)
	c.Node(victim).Kill()
	p.setPause(ackedProducerPause)
	t.Logf("killed node %d, the leader of %s/0, with %d records of that partition acknowledged", victim, topic, ackedAtKill)
	successor := c.leaderOf(adm, topic, 0, victim)
	t.Logf("node %d leads %s/0 now", successor, topic)
	p.waitAcked(t, 0, ackedAtKill+300)

	c.Node(victim).Restart()
	c.waitBrokers(1, 2, 3)
	c.waitISR(adm, topic, 3)
	// The restarted node leads partition 0 again, while the producer
	// writes: what is read back below comes from its log, which had to
	// drop any tail the others lacked and catch up.
	c.electPreferredLeaders(adm, topic, 3)
	ackedAtElection := p.ackedCount(0)
	t.Logf("node %d leads %s/0 again, with %d records of that partition acknowledged", victim, topic, ackedAtElection)
	p.waitAcked(t, 0, ackedAtElection+100)
	p.stop(t)

	p.check(t, consumeAll(t, c.Node(victim).Addr, topic))
}

// TestClusterRollingRestart stops (SIGTERM, which must exit 0) and restarts
// each node in turn while a producer writes and two consumer groups (a
// classic one and a consumer-protocol one) read and commit, waiting before
// the next node until every partition of the topic and of
// __consumer_offsets is fully in sync again. Afterwards every acknowledged
// record is there, no record failed, each group has read to the end, and
// the offsets it committed are what the broker returns for it.
func TestClusterRollingRestart(t *testing.T) {
	t.Parallel()
	// Three offsets partitions instead of fifty keep the run light; they
	// still spread the group's coordinator over the nodes.
	c := startCluster(t, 3, "offsets.topic.num.partitions=3")
	adm := c.newAdmin()
	const topic, partitions, group = "rolling", 3, "rolling-group"
	c.createTopic(adm, topic, partitions, 3, nil)
	c.waitISR(adm, topic, 3)

	p := startAckedProducer(t, c.newClient(ackedProducerOpts...), topic, partitions)
	// A consumer-protocol group (KIP-848) too: its records move with its
	// coordinator from node to node.
	consumer, consumer848 := c.startGroupConsumers(group, topic)
	p.waitAcked(t, 0, 100)
	consumer.waitConsumed(t, 1)
	consumer848.waitConsumed(t, 1)
	c.waitISR(adm, "__consumer_offsets", 3)

	for _, b := range c.Nodes {
		acked := p.totalAcked()
		b.Stop()
		t.Logf("stopped %s with %d records acknowledged", b.Addr, acked)
		b.Restart()
		c.waitBrokers(1, 2, 3)
		c.waitISR(adm, topic, 3)
		c.waitISR(adm, "__consumer_offsets", 3)
		// Writing goes on across the restart.
		p.waitTotalAcked(t, acked+100)
	}
	p.stop(t)
	p.check(t, consumeAll(t, c.Node(1).Addr, topic))
	p.requireNoneFailed(t)

	// adm may still hold connections that the restarted nodes closed, and
	// kgo gives up on a FindCoordinator that meets one (EOF): the checks
	// use a fresh client.
	consumer.checkCommittedAtEnd(t, c.newAdmin(), group, topic, partitions)
	consumer848.checkCommittedAtEnd(t, c.newAdmin(), group+"-848", topic, partitions)
}

// checkCommittedAtEnd waits until the group has read every partition of
// topic to its end offset, stops it (committing what it read), and checks
// that the broker returns, for each partition, the offset the client
// committed, within [0, end]. It returns the end offsets.
func (g *groupConsumer) checkCommittedAtEnd(t *testing.T, adm *kadm.Client, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(testContext(t, 10*time.Second), topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("listing end offsets of %q: %v / %v", topic, err, ends.Error())
	}
	endOffsets := make(map[int32]int64)
	ends.Each(func(o kadm.ListedOffset) { endOffsets[o.Partition] = o.Offset })
	g.waitCaughtUp(t, topic, endOffsets)
	committed := g.stop(t)

	fetched, err := adm.FetchOffsets(testContext(t, 10*time.Second), group)
	if err != nil {
		t.Fatalf("fetching the offsets of group %q: %v", group, err)
	}
	for part := range partitions {
		o, ok := fetched.Lookup(topic, part)
		switch {
		case !ok || o.Err != nil:
			t.Errorf("group %q has no committed offset for %s/%d (error %v)", group, topic, part, o.Err)
		case o.At < 0 || o.At > endOffsets[part]:
			t.Errorf("group %q committed offset %d for %s/%d, outside [0, %d]", group, o.At, topic, part, endOffsets[part])
		case o.At != committed[part]:
			t.Errorf("group %q: the broker returns offset %d for %s/%d, the client committed %d", group, o.At, topic, part, committed[part])
		}
	}
	return endOffsets
}

// ackedProducerOpts are the options of an ackedProducer's client: it picks
// partitions itself, and its buffer is small so that a partition without a
// leader stalls it instead of piling records up.
var ackedProducerOpts = []kgo.Opt{
	kgo.RecordPartitioner(kgo.ManualPartitioner()),
	kgo.MaxBufferedRecords(500),
	kgo.RecordDeliveryTimeout(45 * time.Second),
	kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
}

// An ackedProducer writes at most ackedProducerMaxRecords records (unless
// started with another bound), one every ackedProducerPause, which bounds the
// logs whatever the cluster's speed.
const (
	ackedProducerMaxRecords = 12_000
	ackedProducerPause      = 5 * time.Millisecond
)

// ackedProducer writes values p<partition>-<seq>, seq 0, 1, 2, … in each
// partition, round robin over the partitions, with one idempotent acks=all
// client (franz-go's default), and remembers which were acknowledged, in the
// order they were.
type ackedProducer struct {
	producerLoop
	topic      string
	partitions int32
	maxRecords int
	// pauseNs is the time.Duration between two records.
	pauseNs atomic.Int64

	mu struct {
		sync.Mutex
		produced int
		// acked holds each partition's acknowledged seqs, in the order
		// their promises ran.
		acked  map[int32][]int
		failed failures
	}
}

// startAckedProducer starts producing from a goroutine; the test's cleanup
// stops it if the test does not.
func startAckedProducer(t *testing.T, cl *kgo.Client, topic string, partitions int32) *ackedProducer {
	return startAckedProducerUpTo(t, cl, topic, partitions, ackedProducerMaxRecords)
}

// startAckedProducerUpTo is startAckedProducer writing at most maxRecords.
func startAckedProducerUpTo(t *testing.T, cl *kgo.Client, topic string, partitions int32, maxRecords int) *ackedProducer {
	p := &ackedProducer{topic: topic, partitions: partitions, maxRecords: maxRecords}
	p.mu.acked = make(map[int32][]int)
	p.setPause(ackedProducerPause)
	p.start(t, cl, p.run)
	return p
}

func (p *ackedProducer) run(ctx context.Context) {
	for i := range p.maxRecords {
		if !p.paced() {
			return
		}
		partition, seq := int32(i)%p.partitions, i/int(p.partitions)
		r := &kgo.Record{Topic: p.topic, Partition: partition, Value: []byte(crashValue(int(partition), seq))}
		// Produce blocks while the buffer is full (a partition has no
		// leader), for at most the delivery timeout of what fills it.
		p.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.mu.failed.add(err)
				return
			}
			p.mu.acked[partition] = append(p.mu.acked[partition], seq)
		})
		p.mu.Lock()
		p.mu.produced = i + 1
		p.mu.Unlock()
	}
}

// paced waits for the current pause between records and reports false if
// the producer was halted meanwhile.
func (p *ackedProducer) paced() bool {
	pause := time.Duration(p.pauseNs.Load())
	if pause == 0 {
		select {
		case <-p.halt:
			return false
		default:
			return true
		}
	}
	select {
	case <-p.halt:
		return false
	case <-time.After(pause):
		return true
	}
}

// setPause sets the time between two records; 0 produces flat out, as far
// as the buffer lets it.
func (p *ackedProducer) setPause(d time.Duration) { p.pauseNs.Store(int64(d)) }

func (p *ackedProducer) producedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.produced
}

func (p *ackedProducer) ackedCount(partition int32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.acked[partition])
}

func (p *ackedProducer) totalAcked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, seqs := range p.mu.acked {
		n += len(seqs)
	}
	return n
}

// waitAcked waits until at least n records of partition are acknowledged.
func (p *ackedProducer) waitAcked(t *testing.T, partition int32, n int) {
	t.Helper()
	p.waitFor(t, fmt.Sprintf("%d acknowledged records in partition %d", n, partition), func() bool { return p.ackedCount(partition) >= n })
}

// waitProduced waits until at least n records were handed to the client.
func (p *ackedProducer) waitProduced(t *testing.T, n int) {
	t.Helper()
	p.waitFor(t, fmt.Sprintf("%d records produced", n), func() bool { return p.producedCount() >= n })
}

// waitTotalAcked waits until at least n records are acknowledged in all.
func (p *ackedProducer) waitTotalAcked(t *testing.T, n int) {
	t.Helper()
	p.waitFor(t, fmt.Sprintf("%d acknowledged records", n), func() bool { return p.totalAcked() >= n })
}

func (p *ackedProducer) waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for !ok() {
		if p.finished() && !ok() {
			t.Fatalf("the producer wrote its %d records before %s", p.maxRecords, what)
		}
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("no %s within %v: produced %d, %v", what, clusterSettleTimeout, p.mu.produced, p.mu.failed)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check verifies the records read from each partition: every value is one
// of this producer's for that partition, seqs strictly increase (nothing
// duplicated or reordered; an unacknowledged record may be there or not),
// and the acknowledged ones are all there, in the order of their
// acknowledgements.
func (p *ackedProducer) check(t *testing.T, got map[int32][]*kgo.Record) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for partition := range p.partitions {
		ackedSet := make(map[int]bool, len(p.mu.acked[partition]))
		for _, seq := range p.mu.acked[partition] {
			ackedSet[seq] = true
		}
		var ackedInLog []int
		last := -1
		for _, r := range got[partition] {
			var id, seq int
			if _, err := fmt.Sscanf(string(r.Value), "p%d-%d", &id, &seq); err != nil || id != int(partition) {
				t.Fatalf("partition %d offset %d holds %q, not a record of this partition", partition, r.Offset, r.Value)
			}
			if seq <= last {
				t.Fatalf("partition %d: seq %d at offset %d after seq %d (duplicated or reordered)", partition, seq, r.Offset, last)
			}
			last = seq
			if ackedSet[seq] {
				ackedInLog = append(ackedInLog, seq)
			}
		}
		if acked := p.mu.acked[partition]; !slices.Equal(ackedInLog, acked) {
			missing := 0
			present := make(map[int]bool, len(ackedInLog))
			for _, seq := range ackedInLog {
				present[seq] = true
			}
			for _, seq := range acked {
				if !present[seq] {
					if missing < 5 {
						t.Errorf("partition %d: acknowledged record %s is missing", partition, crashValue(int(partition), seq))
					}
					missing++
				}
			}
			t.Fatalf("partition %d: %d of %d acknowledged records missing, or not in acknowledgement order", partition, missing, len(acked))
		}
		t.Logf("partition %d: acknowledged %d, in log %d", partition, len(p.mu.acked[partition]), len(got[partition]))
	}
	t.Logf("produced %d, %v", p.mu.produced, p.mu.failed)
}

// requireNoneFailed fails the test if any record failed: across a graceful
// restart of one node at a time, the producer's retries must carry every
// record to a new leader.
func (p *ackedProducer) requireNoneFailed(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.failed.n > 0 {
		t.Fatalf("records failed: %v", p.mu.failed)
	}
}

// groupConsumer polls a consumer group client from a goroutine and tracks
// the next offset it has to read in each partition.
type groupConsumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu struct {
		sync.Mutex
		consumed int
		next     map[int32]int64
		errs     int
		firstErr error
	}
}

// startGroupConsumer starts polling cl; the test's cleanup stops it if the
// test does not.
// startGroupConsumers starts two consumers of topic from its start,
// committing every 300 ms: one in group, a classic group, and one in
// group-848, a consumer-protocol group (KIP-848).
func (c *Cluster) startGroupConsumers(group, topic string) (classic, consumer848 *groupConsumer) {
	c.t.Helper()
	opts := []kgo.Opt{
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitInterval(300 * time.Millisecond),
	}
	classic = startGroupConsumer(c.t, c.newClient(slices.Concat(opts, []kgo.Opt{kgo.ConsumerGroup(group)})...))
	consumer848 = startGroupConsumer(c.t, c.newClient(slices.Concat(opts, []kgo.Opt{kgo.ConsumerGroup(group + "-848"),
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.ServerSideBalancer()})...))
	return classic, consumer848
}

func startGroupConsumer(t *testing.T, cl *kgo.Client) *groupConsumer {
	ctx, cancel := context.WithCancel(context.Background())
	g := &groupConsumer{cl: cl, cancel: cancel, done: make(chan struct{})}
	g.mu.next = make(map[int32]int64)
	go g.run(ctx)
	t.Cleanup(g.halted)
	return g
}

func (g *groupConsumer) run(ctx context.Context) {
	defer close(g.done)
	for ctx.Err() == nil {
		fetches := g.cl.PollFetches(ctx)
		g.mu.Lock()
		// Errors while nodes restart are expected: the client retries.
		fetches.EachError(func(_ string, _ int32, err error) {
			g.mu.errs++
			if g.mu.firstErr == nil && ctx.Err() == nil {
				g.mu.firstErr = err
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			g.mu.consumed++
			g.mu.next[r.Partition] = r.Offset + 1
		})
		g.mu.Unlock()
	}
}

func (g *groupConsumer) halted() {
	g.cancel()
	<-g.done
}

// waitConsumed waits until the group has read at least n records.
func (g *groupConsumer) waitConsumed(t *testing.T, n int) {
	t.Helper()
	g.waitFor(t, fmt.Sprintf("%d records consumed", n), func() bool { return g.mu.consumed >= n })
}

// waitCaughtUp waits until the group has read each partition up to ends.
func (g *groupConsumer) waitCaughtUp(t *testing.T, topic string, ends map[int32]int64) {
	t.Helper()
	g.waitFor(t, fmt.Sprintf("consumer at the end offsets %v of %q", ends, topic), func() bool {
		return maps.Equal(g.mu.next, ends)
	})
}

func (g *groupConsumer) waitFor(t *testing.T, what string, okLocked func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		g.mu.Lock()
		ok, next, errs, firstErr := okLocked(), maps.Clone(g.mu.next), g.mu.errs, g.mu.firstErr
		g.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v: consumer at %v, %d fetch errors (first: %v)", what, clusterSettleTimeout, next, errs, firstErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends polling, commits what was read and returns the offsets the
// client committed, by partition.
func (g *groupConsumer) stop(t *testing.T) map[int32]int64 {
	t.Helper()
	g.halted()
	// The client may meet a connection that a restarted node closed: an
	// application would commit again, and so does this.
	deadline := time.Now().Add(clusterSettleTimeout)
	for {
		err := g.cl.CommitUncommittedOffsets(testContext(t, 30*time.Second))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("committing the group's offsets: %v", err)
		}
		t.Logf("committing the group's offsets: %v; again", err)
		time.Sleep(100 * time.Millisecond)
	}
	out := make(map[int32]int64)
	for _, parts := range g.cl.CommittedOffsets() {
		for p, o := range parts {
			out[p] = o.Offset
		}
	}
	return out
}
