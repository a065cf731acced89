package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterChaosCompacted is TestClusterChaos's faults on a compacted
// topic whose replicas each run the log cleaner as they replicate: small
// segments and a tiny dirty ratio make every replica clean again and again
// while nodes die, restart and truncate. An idempotent acks=all producer
// writes values and tombstones over a few keys. Afterwards each replica in
// turn is made leader (a reassignment that reorders the replicas, then a
// preferred election), and what it serves must hold, for every key, the
// last acknowledged write of that key or a later one: compaction and
// failover lose no acknowledged latest value, and resurrect no deleted key.
func TestClusterChaosCompacted(t *testing.T) {
	t.Parallel()
	rounds, rng := chaosSeed(t)
	c := startCluster(t, 3, "offsets.topic.num.partitions=3", "log.cleaner.backoff.ms=100")
	adm := c.newAdmin()
	const topic, partitions = "chaos-compacted", 3
	c.createTopic(adm, topic, partitions, 3, map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"min.insync.replicas":       kadm.StringPtr("2"),
		"segment.bytes":             kadm.StringPtr("4096"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	})
	c.waitISR(adm, topic, 3)

	p := startKeyedProducer(t, c.newClient(ackedProducerOpts...), topic, partitions, 30, 10_000+2_000*rounds)
	p.waitAcked(t, 200)
	c.runChaos(t, rng, rounds, func() string {
		return fmt.Sprintf("%d writes acknowledged", p.ackedCount())
	}, func() {
		c.waitAllInSync(adm, topic)
		p.waitAcked(t, p.ackedCount()+100)
	})
	p.stop(t)

	for _, id := range c.ids() {
		leadAll(t, c, adm, topic, partitions, id)
		p.check(t, fmt.Sprintf("node %d leading", id), consumeAll(t, c.Node(id).Addr, topic))
	}
}

// leadAll makes node id the leader of every partition of topic: each
// partition's replicas are reordered to put id first (a reassignment
// that moves no data), then a preferred election runs.
func leadAll(t *testing.T, c *Cluster, adm *kadm.Client, topic string, partitions int32, id int32) {
	t.Helper()
	var req kadm.AlterPartitionAssignmentsReq
	for part, s := range c.waitISR(adm, topic, 3) {
		order := append([]int32{id}, slices.DeleteFunc(slices.Clone(s.Replicas), func(r int32) bool { return r == id })...)
		req.Assign(topic, part, order)
	}
	resp, err := adm.AlterPartitionAssignments(testContext(t, 30*time.Second), req)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("reordering the replicas of %s to put node %d first: %v", topic, id, err)
	}
	c.waitPartitions(adm, topic, fmt.Sprintf("node %d first in the replicas", id), func(p partitionState) bool {
		return len(p.Replicas) == 3 && p.Replicas[0] == id
	})
	c.electPreferredLeaders(adm, topic, 3)
	c.waitOffsetsAvailable(adm, topic)
}

// keyedWrite is one write of a key: its seq (every write of the producer
// has its own), and whether it deleted the key (a tombstone).
type keyedWrite struct {
	seq       int
	tombstone bool
}

// keyedProducer writes keys k0…k(keys-1) round robin, key i to partition
// i % partitions, with one idempotent acks=all client: each write carries
// its seq in a header, and every tenth write of a key is a tombstone. It
// remembers each key's latest acknowledged write.
type keyedProducer struct {
	producerLoop
	topic      string
	partitions int32
	keys       int
	maxWrites  int

	mu struct {
		sync.Mutex
		acked  map[string]keyedWrite
		ackedN int
		failed failures
	}
}

// keyedProducerPause is the time between two writes.
const keyedProducerPause = 2 * time.Millisecond

func startKeyedProducer(t *testing.T, cl *kgo.Client, topic string, partitions int32, keys, maxWrites int) *keyedProducer {
	p := &keyedProducer{topic: topic, partitions: partitions, keys: keys, maxWrites: maxWrites}
	p.mu.acked = make(map[string]keyedWrite)
	p.start(t, cl, p.run)
	return p
}

func (p *keyedProducer) run(ctx context.Context) {
	for seq := range p.maxWrites {
		select {
		case <-p.halt:
			return
		case <-time.After(keyedProducerPause):
		}
		k := seq % p.keys
		key := fmt.Sprintf("k%d", k)
		w := keyedWrite{seq: seq, tombstone: isTombstone(seq, p.keys)}
		r := &kgo.Record{Topic: p.topic, Partition: int32(k) % p.partitions, Key: []byte(key),
			Headers: []kgo.RecordHeader{{Key: "seq", Value: []byte(strconv.Itoa(seq))}}}
		if !w.tombstone {
			r.Value = fmt.Appendf(nil, "%s-%d", key, seq)
		}
		p.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.mu.failed.add(err)
				return
			}
			p.mu.ackedN++
			if w.seq > p.mu.acked[key].seq || p.mu.acked[key] == (keyedWrite{}) {
				p.mu.acked[key] = w
			}
		})
	}
}

func (p *keyedProducer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.ackedN
}

// waitAcked waits until at least n writes are acknowledged.
func (p *keyedProducer) waitAcked(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(clusterSettleTimeout)
	for p.ackedCount() < n {
		if p.finished() {
			t.Fatalf("the keyed producer wrote its %d records before %d were acknowledged", p.maxWrites, n)
		}
		if time.Now().After(deadline) {
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("fewer than %d writes acknowledged within %v: %d, %v",
				n, clusterSettleTimeout, p.mu.ackedN, p.mu.failed)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check verifies what a leader served (got, by partition, in offset
// order): each key's last record is its last acknowledged write or a later
// write, a tombstone exactly when that write was one; every record is one
// of this producer's writes of its key, in the key's partition.
func (p *keyedProducer) check(t *testing.T, who string, got map[int32][]*kgo.Record) {
	t.Helper()
	last := make(map[string]keyedWrite)
	records := 0
	for part, recs := range got {
		records += len(recs)
		for _, r := range recs {
			seq, err := strconv.Atoi(string(headerValue(r, "seq")))
			key := string(r.Key)
			switch {
			case err != nil || seq%p.keys != keyIndex(key) || int32(seq%p.keys)%p.partitions != part:
				t.Fatalf("%s: %s/%d offset %d holds key %q seq %q, not a write of this producer there", who, p.topic, part, r.Offset, key, headerValue(r, "seq"))
			case (r.Value == nil) != isTombstone(seq, p.keys):
				t.Fatalf("%s: %s/%d offset %d: seq %d of key %q has value %q", who, p.topic, part, r.Offset, seq, key, r.Value)
			}
			last[key] = keyedWrite{seq: seq, tombstone: r.Value == nil}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tombstones := 0
	for key, acked := range p.mu.acked {
		l, ok := last[key]
		switch {
		case !ok:
			t.Errorf("%s: key %q is gone; its last acknowledged write was seq %d (tombstone %v)", who, key, acked.seq, acked.tombstone)
		case l.seq < acked.seq:
			t.Errorf("%s: key %q ends at seq %d, before its last acknowledged write, seq %d (tombstone %v)", who, key, l.seq, acked.seq, acked.tombstone)
		}
		if l.tombstone {
			tombstones++
		}
	}
	t.Logf("%s: %d keys checked (%d deleted) in %d records left of %d acknowledged writes (%v)",
		who, len(p.mu.acked), tombstones, records, p.mu.ackedN, p.mu.failed)
	if records*2 > p.mu.ackedN {
		t.Fatalf("%s: %d records left of %d writes: the cleaner hardly ran, and the test proved little", who, records, p.mu.ackedN)
	}
}

// isTombstone says whether write seq of a keyedProducer over keys keys
// deletes its key: every tenth write of each key, keys out of phase.
func isTombstone(seq, keys int) bool { return (seq/keys+seq%keys)%10 == 9 }

// keyIndex is i of key "k<i>", or -1.
func keyIndex(key string) int {
	if len(key) < 2 || key[0] != 'k' {
		return -1
	}
	i, err := strconv.Atoi(key[1:])
	if err != nil {
		return -1
	}
	return i
}

// headerValue is the value of r's first header named key, or nil.
func headerValue(r *kgo.Record, key string) []byte {
	for _, h := range r.Headers {
		if h.Key == key {
			return h.Value
		}
	}
	return nil
}
