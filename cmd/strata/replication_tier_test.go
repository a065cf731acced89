package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

// The tests of this file run two brokers in process, as replication_test.go
// does, with the remote tier on: one directory object store shared by both
// (the bucket), tier loops every tierTestInterval, 4 KiB segments and a
// local retention of about three segments, so that the leader tiers its
// segments and deletes all but the newest locally. Broker 2 is registered
// from the start but runs only once the leader has tiered: a follower
// added to a partition whose old offsets live only in the remote tier.

const (
	tierTestTopic    = "tiered"
	tierTestInterval = 50 * time.Millisecond
)

var tierTestTP = base.TopicPartition{Topic: tierTestTopic, Partition: 0}

// tierCluster is the shared part of a tiered two-broker test.
type tierCluster struct {
	meta   *metadata.Store
	remote objstore.Store
	lns    map[int32]net.Listener
	addrs  map[int32]string
	regs   map[int32]*metadata.Broker
	nodes  map[int32]*replicaNode
}

// newTierCluster opens a single-voter quorum and registers brokers 1 and
// 2, unfenced, on loopback listeners; it starts neither.
func newTierCluster(t *testing.T) *tierCluster {
	t.Helper()
	remote, err := objstore.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &tierCluster{meta: openTestQuorum(t), remote: remote, lns: map[int32]net.Listener{}, addrs: map[int32]string{},
		regs: map[int32]*metadata.Broker{}, nodes: map[int32]*replicaNode{}}
	for _, id := range []int32{1, 2} {
		c.lns[id], c.regs[id] = registerOnLoopback(t, c.meta, id)
		c.addrs[id] = c.lns[id].Addr().String()
	}
	return c
}

func (c *tierCluster) unfence(t *testing.T, id int32) {
	t.Helper()
	if _, err := c.meta.Heartbeat(t.Context(), metadata.Heartbeat{BrokerID: id, BrokerEpoch: c.regs[id].Epoch,
		AppliedVersion: c.meta.Image().Version}); err != nil {
		t.Fatal(err)
	}
}

func (c *tierCluster) fence(t *testing.T, id int32) {
	t.Helper()
	if err := c.meta.FenceBroker(t.Context(), id, c.regs[id].Epoch); err != nil {
		t.Fatal(err)
	}
}

// start runs broker id with the remote tier on; bootstrap is
// follower.fetch.last.tiered.offset.enable.
func (c *tierCluster) start(t *testing.T, id int32, bootstrap bool) *replicaNode {
	t.Helper()
	n := startReplicaNode(t, replicaSpec{meta: c.meta, id: id, ln: c.lns[id], addrs: c.addrs, remote: c.remote,
		configs: map[string]string{
			"remote.log.manager.task.interval.ms":           strconv.Itoa(int(tierTestInterval.Milliseconds())),
			"remote.log.manager.task.retry.backoff.ms":      "20",
			"remote.log.manager.task.retry.backoff.max.ms":  "200",
			"follower.fetch.last.tiered.offset.enable":      strconv.FormatBool(bootstrap),
			"remote.log.index.file.cache.total.size.bytes":  strconv.Itoa(8 << 20),
			"log.retention.check.interval.ms":               "100",
			"remote.log.manager.copy.max.bytes.per.second":  strconv.Itoa(1 << 30),
			"remote.log.manager.fetch.max.bytes.per.second": strconv.Itoa(1 << 30),
		}})
	c.nodes[id] = n
	return n
}

func (n *replicaNode) partition(t *testing.T) *partition.Partition {
	t.Helper()
	p, ok := n.broker.Partition(tierTestTP)
	if !ok {
		t.Fatalf("node %d does not host %v", n.id, tierTestTP)
	}
	return p
}

// tieredLeader starts broker 1 alone, creates the tiered topic on brokers
// 1 and 2, and fences broker 2 (not running yet), so that broker 1 leads
// with an ISR of itself.
func tieredLeader(t *testing.T, bootstrap bool) (*tierCluster, *replicaNode, *partition.Partition) {
	t.Helper()
	c := newTierCluster(t)
	n1 := c.start(t, 1, bootstrap)
	if _, err := c.meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: tierTestTopic, Assignments: [][]int32{{1, 2}},
		Configs: map[string]string{
			"remote.storage.enable": "true",
			"segment.bytes":         "4096",
			"local.retention.bytes": "12288",
			"retention.bytes":       "-1",
		}}); err != nil {
		t.Fatal(err)
	}
	c.fence(t, 2)
	p1 := n1.partition(t)
	waitUntil(t, "broker 1 to lead alone", func() bool {
		return p1.IsLeader() && slices.Equal(c.meta.Image().Topics[tierTestTopic].Partitions[0].ISR, []int32{1})
	})
	return c, n1, p1
}

// bumpLeaderEpoch fences and unfences broker 1, the only in-sync replica:
// the partition has no leader for a moment, then broker 1 leads again in
// a leader epoch two higher (a new entry in its lineage).
func (c *tierCluster) bumpLeaderEpoch(t *testing.T, p1 *partition.Partition) {
	t.Helper()
	before := p1.Offsets().LeaderEpoch
	c.fence(t, 1)
	waitUntil(t, "broker 1 to stop leading", func() bool { return !p1.IsLeader() })
	c.unfence(t, 1)
	waitUntil(t, "broker 1 to lead again", func() bool { return p1.IsLeader() && p1.Offsets().LeaderEpoch > before })
}

// produceValues produces n records of about 300 bytes, one batch each,
// with acks=1 and no compression, so that segments fill at a known rate;
// it returns their values.
func produceValues(t *testing.T, addr, prefix string, n int) [][]byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics(), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out [][]byte
	for i := range n {
		v := fmt.Appendf(nil, "%s-%04d-%s", prefix, i, bytes.Repeat([]byte{'x'}, 280))
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: tierTestTopic, Value: v}).FirstErr(); err != nil {
			t.Fatalf("producing %s-%d: %v", prefix, i, err)
		}
		out = append(out, v)
	}
	return out
}

// waitTiered waits until the leader has uploaded every rolled segment and
// deleted the tiered ones beyond its local retention, and stays so: its
// earliest pending upload is its active segment's base, its local log
// starts above its log start, and neither moves for a few tier passes.
func waitTiered(t *testing.T, n *replicaNode, p *partition.Partition) (pending base.Offset, off partition.Offsets) {
	t.Helper()
	settled := func() (base.Offset, partition.Offsets, bool) {
		segs := p.TierLocal().Segments()
		o, ok := n.broker.EarliestPendingUpload(p)
		off := p.Offsets()
		return o, off, ok && len(segs) > 0 && o == segs[len(segs)-1].BaseOffset && off.LocalStart > off.LogStart
	}
	waitUntil(t, "the leader to tier and delete its old local segments", func() bool {
		o, off, ok := settled()
		if !ok {
			return false
		}
		time.Sleep(6 * tierTestInterval)
		o2, off2, ok := settled()
		pending = o
		return ok && o2 == o && off2 == off
	})
	_, off, _ = settled()
	return pending, off
}

// localBytes is p's local log from from to its log end.
func localBytes(t *testing.T, p *partition.Partition, from base.Offset) []byte {
	t.Helper()
	res, err := p.ReadIsolated(from, 64<<20, nil, partition.ReadLogEnd)
	if err != nil {
		t.Fatalf("reading %v from %d: %v", p.TP(), from, err)
	}
	return res.Records
}

// TestTieredFollowerRebuildsStateFromRemoteTier (KIP-405's follower
// fetch): a follower added after its leader tiered and locally deleted
// its old segments fetches from offset 0, gets
// OFFSET_MOVED_TO_TIERED_STORAGE, rebuilds its leader-epoch lineage and
// producer state from the remote tier up to the leader's local log start
// and replicates from there: its log start is the leader's, its local log
// the leader's byte for byte, its lineage the leader's.
func TestTieredFollowerRebuildsStateFromRemoteTier(t *testing.T) {
	c, n1, p1 := tieredLeader(t, false)
	produceValues(t, n1.addr, "a", 60)
	c.bumpLeaderEpoch(t, p1)
	produceValues(t, n1.addr, "b", 100)
	_, lead := waitTiered(t, n1, p1)

	c.unfence(t, 2)
	n2 := c.start(t, 2, false)
	p2 := n2.partition(t)
	waitUntil(t, "the follower to catch up", func() bool {
		return p2.Offsets().LogEnd == p1.Offsets().LogEnd
	})
	got := p2.Offsets()
	if got.LogStart != lead.LogStart || got.LocalStart != lead.LocalStart {
		t.Fatalf("follower offsets %+v; want the leader's log start %d and local log start %d", got, lead.LogStart, lead.LocalStart)
	}
	if !bytes.Equal(localBytes(t, p2, got.LocalStart), localBytes(t, p1, got.LocalStart)) {
		t.Fatal("the follower's local log differs from the leader's")
	}
	if l1, l2 := p1.Lineage(), p2.Lineage(); !slices.Equal(l1, l2) || len(l1) < 2 {
		t.Fatalf("follower lineage %v, leader's %v (want equal, with the epoch bump)", l2, l1)
	}
	waitUntil(t, "the follower in the ISR", func() bool {
		return len(c.meta.Image().Topics[tierTestTopic].Partitions[0].ISR) == 2
	})
}

// TestTieredFollowerBootstrapsFromLastTieredOffset is reference 004
// (KIP-1023): with follower.fetch.last.tiered.offset.enable, an empty
// follower starts at its leader's earliest pending upload offset, not at
// the log start nor at the leader's local log start: it never fetches an
// offset the remote tier holds. Made leader, it answers an idempotent
// producer's retry of a batch written long before it joined as a
// duplicate (its producer state came from the remote snapshot), and
// serves consumers reading from the log start the tiered offsets from the
// remote tier.
func TestTieredFollowerBootstrapsFromLastTieredOffset(t *testing.T) {
	c, n1, p1 := tieredLeader(t, true)
	values := produceValues(t, n1.addr, "a", 40)
	retry, dupValues := idempotentProduce(t, n1.addr, c.meta.Image().Topics[tierTestTopic].ID)
	values = append(values, dupValues...)
	origOffset := produceBatch(t, n1.addr, retry)
	c.bumpLeaderEpoch(t, p1)
	values = append(values, produceValues(t, n1.addr, "b", 100)...)
	pending, lead := waitTiered(t, n1, p1)
	if pending <= lead.LocalStart || origOffset >= lead.LocalStart {
		t.Fatalf("setup: earliest pending upload %d, leader offsets %+v, retried batch at %d", pending, lead, origOffset)
	}

	c.unfence(t, 2)
	n2 := c.start(t, 2, true)
	p2 := n2.partition(t)
	waitUntil(t, "the follower to catch up", func() bool {
		return p2.Offsets().LogEnd == p1.Offsets().LogEnd
	})
	got := p2.Offsets()
	if got.LocalStart != pending || got.LogStart != lead.LogStart {
		t.Fatalf("follower offsets %+v; want its local log from the leader's earliest pending upload %d (leader's local log start %d), its log start the leader's %d",
			got, pending, lead.LocalStart, lead.LogStart)
	}
	if !bytes.Equal(localBytes(t, p2, pending), localBytes(t, p1, pending)) {
		t.Fatal("the follower's local log differs from the leader's")
	}
	if l1, l2 := p1.Lineage(), p2.Lineage(); !slices.Equal(l1, l2) {
		t.Fatalf("follower lineage %v, leader's %v", l2, l1)
	}
	if p2.SizeBytes() >= p1.SizeBytes() {
		t.Errorf("the follower holds %d local bytes, the leader %d: it fetched what is tiered", p2.SizeBytes(), p1.SizeBytes())
	}

	// Broker 2 joins the ISR; broker 1 is fenced, so broker 2 leads.
	waitUntil(t, "the follower in the ISR", func() bool {
		return len(c.meta.Image().Topics[tierTestTopic].Partitions[0].ISR) == 2
	})
	c.fence(t, 1)
	waitUntil(t, "broker 2 to lead", func() bool { return p2.IsLeader() })
	end := p2.Offsets().LogEnd
	if o := produceBatch(t, n2.addr, retry); o != origOffset {
		t.Fatalf("the retried batch was answered at offset %d, want the original %d", o, origOffset)
	}
	if e := p2.Offsets().LogEnd; e != end {
		t.Fatalf("the retried batch was appended again: log end %d, was %d", e, end)
	}

	// A consumer reads everything from the log start off broker 2: the
	// offsets below its local log start come from the remote tier.
	if got := consumeFrom(t, n2.addr, len(values)); !slices.EqualFunc(got, values, bytes.Equal) {
		t.Fatalf("consumed %d records from the new leader, want the %d produced, in order", len(got), len(values))
	}
}

// idempotentProduce asks broker addr for a producer id and returns a
// produce request of one idempotent batch of three records (sequence 0),
// which can be sent again as the producer's retry, and its values.
func idempotentProduce(t *testing.T, addr string, topicID base.TopicID) (*kmsg.ProduceRequest, [][]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ip, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(t.Context(), cl)
	if err != nil || ip.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v, code %d", err, ip.ErrorCode)
	}
	var values [][]byte
	var recs []byte
	for i := range 3 {
		v := fmt.Appendf(nil, "idempotent-%d", i)
		values = append(values, v)
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: 2, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: ip.ProducerID, ProducerEpoch: ip.ProducerEpoch, FirstSequence: 0, NumRecords: 3, Records: recs}
	raw := b.AppendTo(nil)
	if err := record.FinishBatch(raw); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = tierTestTopic, topicID // Produce v13+ names topics by id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req, values
}

// produceBatch sends req to broker addr, the partition's leader, and
// returns the base offset it answers.
func produceBatch(t *testing.T, addr string, req *kmsg.ProduceRequest) base.Offset {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := req.RequestWith(t.Context(), cl.SeedBrokers()[0])
	if err != nil {
		t.Fatal(err)
	}
	rp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
		t.Fatalf("producing the idempotent batch to %s: %v", addr, err)
	}
	return base.Offset(rp.BaseOffset)
}

// consumeFrom reads n records of the tiered topic from offset 0 off the
// broker at addr and returns their values.
func consumeFrom(t *testing.T, addr string, n int) [][]byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tierTestTopic: {0: kgo.NewOffset().At(0)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out [][]byte
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", len(out), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("consuming: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r.Value) })
	}
	return out
}
