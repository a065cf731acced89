package broker

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
)

// replicationFixture is broker 1 in a metadata quorum where brokers 1, 2
// and 3 are registered and unfenced. Nothing runs for 2 and 3: the tests
// play their part (their fetches, their fencing). The broker's clock is
// manual and its loops are idle: the tests run what they need.
type replicationFixture struct {
	t       *testing.T
	meta    *metadata.Store
	epochs  map[int32]int64 // broker epoch by id
	clock   *clock.Manual
	b       *Broker
	opts    Options // b's, for restart
	follows *followRecorder
	leads   *leadRecorder
}

// testLagMax is the fixture's replica.lag.time.max.ms.
const testLagMax = 10 * time.Second

func newReplicationFixture(t *testing.T, cfg partition.Config) *replicationFixture {
	t.Helper()
	meta := openTestMeta(t)
	return newReplicationFixtureOn(t, meta, cfg)
}

// storeOf is the store under a Metadata of the tests.
func storeOf(m Metadata) *metadata.Store {
	switch m := m.(type) {
	case *metadata.Store:
		return m
	case *overrideMeta:
		return m.Store
	case *scriptedAlterMeta:
		return m.Store
	}
	panic(fmt.Sprintf("no store under %T", m))
}

// newReplicationFixtureOn is the fixture with the broker reading meta.
func newReplicationFixtureOn(t *testing.T, meta Metadata, cfg partition.Config) *replicationFixture {
	t.Helper()
	f := &replicationFixture{t: t, meta: storeOf(meta), epochs: map[int32]int64{},
		clock: clock.NewManual(time.Now()), follows: &followRecorder{}, leads: &leadRecorder{}}
	for _, id := range []int32{1, 2, 3} {
		reg, err := f.meta.RegisterBroker(t.Context(), metadata.BrokerRegistration{ID: id, Incarnation: [16]byte{byte(id)},
			Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id, SecurityProtocol: "PLAINTEXT"}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.meta.UnfenceBroker(t.Context(), id, reg.Epoch); err != nil {
			t.Fatal(err)
		}
		f.epochs[id] = reg.Epoch
	}
	o := idleTestOptions(t, f.meta, cfg)
	o.Meta = meta
	o.Clock = f.clock
	o.ReplicaLagTimeMax = testLagMax
	o.Followers = f.follows
	o.OnOpen = func(p *partition.Partition) { f.leads.add("open", p.TP()) }
	o.OnClose = func(p *partition.Partition) { f.leads.add("close", p.TP()) }
	f.opts = o
	f.b = startTestBroker(t, o)
	return f
}

// restart closes the broker and starts it again on the same data and
// metadata, as a broker process that stops and starts while the quorum
// stays up.
func (f *replicationFixture) restart() {
	f.t.Helper()
	if err := f.b.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.b = startTestBroker(f.t, f.opts)
}

// replicatedConfig is a partition config for the replication tests.
func replicatedConfig(minInsync int) partition.Config {
	return partition.Config{SegmentBytes: 1 << 20, IndexIntervalBytes: 4096, SegmentIndexBytes: 1 << 20,
		MaxMessageBytes: 1 << 20, MinInsyncReplicas: minInsync}
}

// createTopic creates topic name with the given replica lists and
// reconciles the broker.
func (f *replicationFixture) createTopic(name string, assignments ...[]int32) *metadata.Topic {
	f.t.Helper()
	topic, err := f.meta.CreateTopic(f.t.Context(), metadata.CreateTopic{Name: name, Assignments: assignments})
	if err != nil {
		f.t.Fatal(err)
	}
	f.reconcile()
	return topic
}

// createLed creates topic name with one partition on replicas (this node
// first, its leader) and returns the partition and the broker's copy.
func (f *replicationFixture) createLed(name string, replicas ...int32) (base.TopicPartition, *partition.Partition) {
	f.t.Helper()
	f.createTopic(name, replicas)
	tp := base.TopicPartition{Topic: name, Partition: 0}
	return tp, f.hosted(tp)
}

func (f *replicationFixture) reconcile() {
	f.t.Helper()
	if err := f.b.Reconcile(); err != nil {
		f.t.Fatal(err)
	}
}

func (f *replicationFixture) fence(id int32) {
	f.t.Helper()
	if err := f.meta.FenceBroker(f.t.Context(), id, f.epochs[id]); err != nil {
		f.t.Fatal(err)
	}
	f.reconcile()
}

func (f *replicationFixture) unfence(id int32) {
	f.t.Helper()
	if err := f.meta.UnfenceBroker(f.t.Context(), id, f.epochs[id]); err != nil {
		f.t.Fatal(err)
	}
	f.reconcile()
}

// hosted is partition tp as hosted by the broker, failing if it is not.
func (f *replicationFixture) hosted(tp base.TopicPartition) *partition.Partition {
	f.t.Helper()
	f.b.mu.Lock()
	h, ok := f.b.mu.parts[tp]
	f.b.mu.Unlock()
	if !ok {
		f.t.Fatalf("%v is not hosted", tp)
	}
	return h.p
}

func (f *replicationFixture) isHosted(tp base.TopicPartition) bool {
	f.b.mu.Lock()
	defer f.b.mu.Unlock()
	_, ok := f.b.mu.parts[tp]
	return ok
}

// imagePartition is tp's state in the current image.
func (f *replicationFixture) imagePartition(tp base.TopicPartition) metadata.Partition {
	return f.meta.Image().Topics[tp.Topic].Partitions[tp.Partition]
}

// awaitISR waits until the image holds isr for tp (an ISR change goes to
// the quorum on a goroutine of its own), then reconciles.
func (f *replicationFixture) awaitISR(tp base.TopicPartition, isr ...int32) metadata.Partition {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pa := f.imagePartition(tp)
		if slices.Equal(pa.ISR, isr) {
			f.reconcile()
			return pa
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the ISR of %v is %v, want %v", tp, pa.ISR, isr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// append writes n single-record batches to p, which leads.
func appendRecords(t *testing.T, p *partition.Partition, n int) {
	t.Helper()
	for i := range n {
		if _, _, err := p.Append(keyedBatch(fmt.Sprintf("k%d", i)), partition.AcksLeader); err != nil {
			t.Fatal(err)
		}
	}
}

// fetch is follower id's fetch of tp from offset, with its registered
// broker epoch and, when lastEpoch >= 0, its last fetched epoch.
func (f *replicationFixture) fetch(tp base.TopicPartition, id int32, offset base.Offset, lastEpoch base.Epoch) (ReplicaFetchResult, error) {
	return f.b.ReplicaFetch(ReplicaFetch{TP: tp, ReplicaID: id, BrokerEpoch: f.epochs[id], HasBrokerEpoch: true,
		FetchOffset: offset, LastFetchedEpoch: lastEpoch, HasLastFetchedEpoch: lastEpoch >= 0})
}

// mustFetch is fetch, which must read from its offset.
func (f *replicationFixture) mustFetch(tp base.TopicPartition, id int32, offset base.Offset, lastEpoch base.Epoch) {
	f.t.Helper()
	res, err := f.fetch(tp, id, offset, lastEpoch)
	if err != nil || res.Verdict != replication.FetchFromOffset {
		f.t.Fatalf("fetch of %v by %d at %d: %+v, %v", tp, id, offset, res, err)
	}
}

// followRecorder records what Followers is told.
type followRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *followRecorder) Follow(p *partition.Partition, leader int32, epoch base.Epoch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("follow %v %d@%d", p.TP(), leader, epoch))
}

func (r *followRecorder) Unfollow(tp base.TopicPartition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("unfollow %v", tp))
}

// take returns the calls since the last take.
func (r *followRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// leadRecorder records OnOpen and OnClose.
type leadRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *leadRecorder) add(what string, tp base.TopicPartition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("%s %v", what, tp))
}

func (r *leadRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// sameCalls compares recorded calls regardless of order (Reconcile
// visits partitions in map order).
func sameCalls(got, want []string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}
