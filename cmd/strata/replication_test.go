package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
	"github.com/strata-broker/strata/internal/server"
	"github.com/strata-broker/strata/internal/tier"
)

// replicaNode is one broker of an in-process two-broker test: its own
// data dir, api handler and loopback server, sharing the metadata store
// with the other (the quorum's own replication is metadata's tests'
// concern); it follows through replication's fetchers over real TCP with
// a franz-go client.
type replicaNode struct {
	id       int32
	addr     string
	broker   *broker.Broker
	fetchers *replication.Fetchers
	srv      *server.Server
	clients  map[int32]*kgo.Client
	reg      *metadata.Broker
	// coord holds the group and transaction coordinators, as serve runs
	// them, and the connections their markers take to the other broker
	// (its meta is the shared store, which the test closes: stop never
	// calls its shutdown).
	coord *node
	// reader reads the remote tier; nil without one.
	reader *tier.Reader
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// replicaSpec says how startReplicaNode runs a broker.
type replicaSpec struct {
	meta  *metadata.Store
	id    int32
	ln    net.Listener
	addrs map[int32]string // every node's address
	// configs are broker configs on top of node.id and log.dirs. ln
	// serves the inter-broker listener of listeners (PLAINTEXT by
	// default), with its protocol's TLS and SASL as serve sets them up; on
	// a listener other than PLAINTEXT, or with num.replica.fetchers above
	// 1, the followers fetch through newReplicaClients, as serve's do,
	// rather than through plain clients of addrs.
	configs map[string]string
	// remote is the shared bucket; nil runs without the remote tier.
	remote objstore.Store
}

// startReplicaNode runs the broker that spec describes.
func startReplicaNode(t *testing.T, spec replicaSpec) *replicaNode {
	t.Helper()
	meta, id := spec.meta, spec.id
	logger := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", id)
	}
	dir := t.TempDir()
	configs := map[string]string{"node.id": strconv.Itoa(int(id)), "log.dirs": dir, "group.initial.rebalance.delay.ms": "0"}
	maps.Copy(configs, spec.configs)
	cfg, err := config.LoadBroker("", nil, configs)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := listenerNamed(cfg.Listeners, cfg.InterBrokerListener)
	if !ok {
		t.Fatalf("no inter-broker listener %s", cfg.InterBrokerListener)
	}
	secured := l.Protocol != config.ProtocolPlaintext
	n := &replicaNode{id: id, addr: spec.ln.Addr().String(), clients: map[int32]*kgo.Client{}}
	var tierState replication.TierState
	var tierOpts *broker.TierDeps
	if spec.remote != nil {
		if n.reader, err = remoteReader(cfg, spec.remote, logger); err != nil {
			t.Fatal(err)
		}
		tierState = broker.TierState{Meta: meta, Reader: n.reader}
		tierOpts = tierDeps(cfg, spec.remote, meta, n.reader)
	}
	n.fetchers, err = replication.NewFetchers(replication.FetchersOptions{
		NodeID: id,
		BrokerEpoch: func() int64 {
			if b, ok := meta.Image().Brokers[id]; ok {
				return b.Epoch
			}
			return -1
		},
		Client: func(leader int32, fetcher int) (kmsg.Requestor, error) {
			if secured || cfg.ReplicaFetch.Fetchers > 1 {
				return n.coord.replicaClients.fetcherClient(leader, fetcher)
			}
			cl, ok := n.clients[leader]
			if !ok {
				return nil, fmt.Errorf("no client for broker %d", leader)
			}
			return cl.SeedBrokers()[0], nil
		},
		Fetchers: cfg.ReplicaFetch.Fetchers,
		MaxWait:  100 * time.Millisecond, MinBytes: 1, MaxBytes: 10 << 20, PartitionMaxBytes: 1 << 20,
		Backoff: 50 * time.Millisecond, RequestTimeout: 10 * time.Second,
		Tier:                      tierState,
		LastTieredOffsetBootstrap: cfg.FollowerFetchLastTieredOffset,
		Throttle:                  newFollowerThrottle(cfg, meta),
		Clock:                     clock.Real{}, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	for other, addr := range spec.addrs {
		if other == id || secured {
			continue
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableClientMetrics())
		if err != nil {
			t.Fatal(err)
		}
		n.clients[other] = cl
	}
	n.coord = &node{meta: meta, logger: logger}
	if n.coord.replicaClients, err = newReplicaClients(cfg, meta, nil); err != nil {
		t.Fatal(err)
	}
	if n.coord.groups, err = newGroupCoordinator(cfg, meta, clock.Real{}, logger); err != nil {
		t.Fatal(err)
	}
	if n.coord.txns, err = newTxnCoordinator(cfg, clock.Real{}, logger, n.coord); err != nil {
		t.Fatal(err)
	}
	if n.coord.shareStates, err = newShareStateCoordinator(meta, clock.Real{}, logger); err != nil {
		t.Fatal(err)
	}
	n.broker, err = broker.New(broker.Options{
		DataDir: dir, NodeID: id, Meta: meta, Resolve: topicResolver(cfg),
		RetentionInterval: time.Minute, FlushCheckInterval: flushCheckInterval,
		Clock: clock.Real{}, Logger: logger,
		Followers:         n.fetchers,
		ReplicaLagTimeMax: 2 * time.Second,
		OnOpen:            n.coord.onPartitionOpen,
		OnClose:           n.coord.onPartitionClose,
		Tier:              tierOpts,
	})
	if err != nil {
		t.Fatal(err)
	}
	n.coord.txns.setBroker(n.broker)
	host, port, _ := net.SplitHostPort(n.addr)
	p, _ := strconv.Atoi(port)
	h, err := api.New(api.Options{Broker: n.broker, Meta: meta, Config: cfg, Logger: logger,
		Advertised: map[string]api.Address{l.Name: {Host: host, Port: int32(p)}},
		Groups:     n.coord.groups.rt, Txns: n.coord.txns.rt, ShareStates: n.coord.shareStates.rt, Peers: n.coord.replicaClients.client})
	if err != nil {
		t.Fatal(err)
	}
	plainUsers := func(name string) *atomic.Pointer[map[string]string] { return newPlainUsersSet(logger).add(name, cfg) }
	tc, sc, err := security(cfg, l, meta, nil, func(l config.Listener) (*tls.Config, error) { return tlsConfig(cfg.TLSFor(l.Name)) }, plainUsers)
	if err != nil {
		t.Fatal(err)
	}
	n.srv, err = server.New(server.Options{Listener: spec.ln, Handler: handlerAdapter{h: h}, MaxRequestBytes: cfg.SocketRequestMaxBytes,
		Logger: logger, ListenerName: l.Name, TLS: tc, SASL: sc, FailedAuthenticationDelay: cfg.FailedAuthenticationDelay})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = n.srv.Serve(context.Background()) }()
	t.Cleanup(n.stop)
	return n
}

func (n *replicaNode) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n.coord.txns.close()
	n.coord.groups.rt.Close()
	n.coord.shareStates.rt.Close()
	n.coord.replicaClients.close()
	_ = n.srv.Shutdown(ctx)
	n.fetchers.Close()
	_ = n.broker.Close()
	if n.reader != nil {
		n.reader.Close()
	}
	for _, cl := range n.clients {
		cl.Close()
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// openTestQuorum opens a single-voter metadata quorum, closed at cleanup.
func openTestQuorum(t *testing.T) *metadata.Store {
	t.Helper()
	meta, err := metadata.Open(t.Context(), metadata.Options{Dir: t.TempDir(), NodeID: 1, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = meta.Close() })
	return meta
}

// registerOnLoopback listens on a loopback port for broker id and
// registers and unfences it there.
func registerOnLoopback(t *testing.T, meta *metadata.Store, id int32) (net.Listener, *metadata.Broker) {
	t.Helper()
	ln := listenLoopback(t)
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	b, err := meta.RegisterBroker(t.Context(), metadata.BrokerRegistration{ID: id, Incarnation: [16]byte{byte(id)},
		Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: host, Port: int32(p), SecurityProtocol: "PLAINTEXT"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := meta.Heartbeat(t.Context(), metadata.Heartbeat{BrokerID: id, BrokerEpoch: b.Epoch, AppliedVersion: meta.Image().Version}); err != nil {
		t.Fatal(err)
	}
	return ln, b
}

// twoReplicas starts a single-voter quorum and nodes 1 and 2, registered
// and unfenced, with topic "r" of one partition on both, led by 1.
func twoReplicas(t *testing.T) (*metadata.Store, map[int32]*replicaNode, *metadata.Topic) {
	t.Helper()
	meta := openTestQuorum(t)
	nodes := startTwoNodes(t, meta)
	topic, err := meta.CreateTopic(t.Context(), metadata.CreateTopic{Name: "r", Assignments: [][]int32{{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	return meta, nodes, topic
}

func produceTo(t *testing.T, addr string, acks kgo.Acks, values ...string) {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.RequiredAcks(acks), kgo.DisableClientMetrics(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(30 * time.Second)}
	if acks != kgo.AllISRAcks() {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range values {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "r", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("producing %q to %s: %v", v, addr, err)
		}
	}
}

func hostedPartition(t *testing.T, n *replicaNode) *partition.Partition {
	t.Helper()
	p, ok := n.broker.Partition(base.TopicPartition{Topic: "r", Partition: 0})
	if !ok {
		t.Fatalf("node %d does not host r-0", n.id)
	}
	return p
}

// waitUntil polls cond; the bound is a failsafe, not a timing under test.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logBytes reads p's whole log from its start to its log end.
func logBytes(t *testing.T, p *partition.Partition) []byte {
	t.Helper()
	off := p.Offsets()
	res, err := p.ReadIsolated(off.LogStart, 64<<20, nil, partition.ReadLogEnd)
	if err != nil {
		t.Fatal(err)
	}
	return res.Records
}

// TestReplicationFollowsLeaderAndTruncatesAfterFailover: records produced
// to the leader with acks=all are acknowledged once the follower has them;
// the follower's log is byte-identical; after the follower missed records
// produced with acks=1 and the leader is fenced, the new leader's follower
// (the old leader) truncates its unreplicated tail (KIP-101/279) and
// replicates the new leader's records, so both logs end identical.
func TestReplicationFollowsLeaderAndTruncatesAfterFailover(t *testing.T) {
	meta, nodes, topic := twoReplicas(t)
	p1, p2 := hostedPartition(t, nodes[1]), hostedPartition(t, nodes[2])
	waitUntil(t, "roles from the image", func() bool { return p1.IsLeader() && !p2.IsLeader() })
	produceTo(t, nodes[1].addr, kgo.AllISRAcks(), "a", "b", "c")
	if hw := p1.Offsets().HighWatermark; hw != 3 {
		t.Fatalf("leader high watermark %d after three acks=all records, want 3", hw)
	}
	if end := p2.Offsets().LogEnd; end < 3 {
		t.Fatalf("acks=all acknowledged with the follower at %d", end)
	}
	waitUntil(t, "the follower's high watermark", func() bool { return p2.Offsets().HighWatermark == 3 })
	if !bytes.Equal(logBytes(t, p1), logBytes(t, p2)) {
		t.Fatal("the follower's log differs from the leader's")
	}

	// The follower stops fetching; the leader takes two records it cannot
	// commit, then is fenced: node 2 leads in epoch 1.
	nodes[2].fetchers.Unfollow(base.TopicPartition{Topic: "r", Partition: 0})
	produceTo(t, nodes[1].addr, kgo.LeaderAck(), "lost-1", "lost-2")
	if end := p1.Offsets().LogEnd; end != 5 {
		t.Fatalf("leader log end %d, want 5", end)
	}
	if err := meta.FenceBroker(t.Context(), 1, nodes[1].reg.Epoch); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "node 2 to lead", func() bool { return p2.IsLeader() && !p1.IsLeader() })
	produceTo(t, nodes[2].addr, kgo.LeaderAck(), "d", "e", "f")
	waitUntil(t, "the old leader to truncate and catch up", func() bool {
		return p1.Offsets().LogEnd == p2.Offsets().LogEnd && bytes.Equal(logBytes(t, p1), logBytes(t, p2))
	})
	if got := p1.Offsets().LeaderEpoch; got != 1 {
		t.Errorf("old leader follows epoch %d, want 1", got)
	}
	// Unfenced, node 1 rejoins the ISR through node 2's expansion.
	if _, err := meta.Heartbeat(t.Context(), metadata.Heartbeat{BrokerID: 1, BrokerEpoch: nodes[1].reg.Epoch, AppliedVersion: meta.Image().Version}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "node 1 back in the ISR", func() bool {
		isr := meta.Image().TopicsByID[topic.ID].Partitions[0].ISR
		return len(isr) == 2
	})
	produceTo(t, nodes[2].addr, kgo.AllISRAcks(), "g")
	if end := p1.Offsets().LogEnd; end != p2.Offsets().LogEnd {
		t.Errorf("acks=all acknowledged with node 1 at %d, node 2 at %d", end, p2.Offsets().LogEnd)
	}
}

// TestReplicationFollowerStartsOverPastLeaderLogStart: a follower that
// was away while its leader's log start moved past the follower's log end
// (DeleteRecords) gets OFFSET_OUT_OF_RANGE, asks the leader for its
// offsets, starts over empty at the leader's log start and replicates
// from there.
func TestReplicationFollowerStartsOverPastLeaderLogStart(t *testing.T) {
	meta, nodes, _ := twoReplicas(t)
	p1, p2 := hostedPartition(t, nodes[1]), hostedPartition(t, nodes[2])
	waitUntil(t, "roles from the image", func() bool { return p1.IsLeader() && !p2.IsLeader() })
	produceTo(t, nodes[1].addr, kgo.AllISRAcks(), "a", "b")
	tp := base.TopicPartition{Topic: "r", Partition: 0}
	nodes[2].fetchers.Unfollow(tp)
	// Fenced, node 2 leaves the ISR, so node 1 commits alone.
	if err := meta.FenceBroker(t.Context(), 2, nodes[2].reg.Epoch); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "an ISR of one", func() bool { return len(meta.Image().Topics["r"].Partitions[0].ISR) == 1 })
	produceTo(t, nodes[1].addr, kgo.AllISRAcks(), "c", "d", "e", "f")
	waitUntil(t, "the leader's high watermark", func() bool { return p1.Offsets().HighWatermark == 6 })
	if _, err := p1.DeleteRecords(5); err != nil {
		t.Fatal(err)
	}
	epoch := meta.Image().Topics["r"].Partitions[0].LeaderEpoch
	nodes[2].fetchers.Follow(p2, 1, epoch)
	waitUntil(t, "the follower to start over at the leader's log start", func() bool {
		off := p2.Offsets()
		return off.LogStart == 5 && off.LogEnd == 6
	})
	if !bytes.Equal(logBytes(t, p1), logBytes(t, p2)) {
		t.Fatal("the follower's log differs from the leader's after starting over")
	}
}

// TestClusterClientsRouteThroughMetadata: clients that know only the
// follower find the leader through Metadata (which lists both brokers),
// and a consumer group finds its coordinator (the leader of its
// __consumer_offsets partition, on either broker) through FindCoordinator.
func TestClusterClientsRouteThroughMetadata(t *testing.T) {
	meta, nodes, _ := twoReplicas(t)
	follower := nodes[2].addr
	adm, err := kgo.NewClient(kgo.SeedBrokers(follower), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(t.Context(), adm)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]string{}
	for _, b := range md.Brokers {
		got[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	if len(got) != 2 || got[1] != nodes[1].addr || got[2] != nodes[2].addr {
		t.Fatalf("Metadata lists %v", got)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(follower), kgo.DisableClientMetrics(), kgo.DefaultProduceTopic("r"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 20
	for i := range n {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("producing through the follower's metadata: %v", err)
		}
	}
	// One group coordinated by each broker: __consumer_offsets is spread
	// over both.
	consumeGroup(t, follower, "g0", n)
	byCoordinator := map[int32]string{}
	offsetsTopic := meta.Image().Topics["__consumer_offsets"]
	for i := 0; len(byCoordinator) < 2 && i < 1000; i++ {
		g := "by-coordinator-" + strconv.Itoa(i)
		leader := offsetsTopic.Partitions[offsets.PartitionFor(g, int32(len(offsetsTopic.Partitions)))].Leader
		if _, ok := byCoordinator[leader]; !ok {
			byCoordinator[leader] = g
		}
	}
	if len(byCoordinator) != 2 {
		t.Fatalf("no group is coordinated by each broker: %v", byCoordinator)
	}
	for _, g := range byCoordinator {
		consumeGroup(t, follower, g, n)
		consumeGroup(t, nodes[1].addr, g+"-again", n)
	}
}

// consumeGroup reads n records of "r" as group, committing them.
func consumeGroup(t *testing.T, seed, group string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.DisableClientMetrics(), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics("r"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	seen := 0
	for seen < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("group %s read %d of %d records: %v", group, seen, n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("group %s: %v", group, err) })
		seen += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("group %s committing: %v", group, err)
	}
}

// TestClusterProducerIDsAreUnique: brokers of a cluster hand out producer
// ids from blocks of the quorum, so no two producers share one (a shared
// id makes one producer's batches the other's "duplicates", dropped).
func TestClusterProducerIDsAreUnique(t *testing.T) {
	_, nodes, _ := twoReplicas(t)
	seen := map[base.ProducerID]int32{}
	for range 2500 {
		for id, n := range nodes {
			pid, err := n.broker.NextProducerID()
			if err != nil {
				t.Fatal(err)
			}
			if other, dup := seen[pid]; dup {
				t.Fatalf("producer id %d handed out by brokers %d and %d", pid, other, id)
			}
			seen[pid] = id
		}
	}
}

// startTwoNodes registers nodes 1 and 2 in meta (unfenced, on loopback),
// creates topics, then starts both brokers.
func startTwoNodes(t *testing.T, meta *metadata.Store, topics ...metadata.CreateTopic) map[int32]*replicaNode {
	t.Helper()
	return startTwoNodesWith(t, meta, nil, topics...)
}

// startTwoNodesWith is startTwoNodes with broker configs for both nodes.
func startTwoNodesWith(t *testing.T, meta *metadata.Store, configs map[string]string, topics ...metadata.CreateTopic) map[int32]*replicaNode {
	t.Helper()
	lns, addrs := map[int32]net.Listener{}, map[int32]string{}
	for _, id := range []int32{1, 2} {
		lns[id], _ = registerOnLoopback(t, meta, id)
		addrs[id] = lns[id].Addr().String()
	}
	for _, ct := range topics {
		if _, err := meta.CreateTopic(t.Context(), ct); err != nil {
			t.Fatal(err)
		}
	}
	nodes := map[int32]*replicaNode{}
	for id, ln := range lns {
		nodes[id] = startReplicaNode(t, replicaSpec{meta: meta, id: id, ln: ln, addrs: addrs, configs: configs})
		nodes[id].reg = meta.Image().Brokers[id]
	}
	return nodes
}
