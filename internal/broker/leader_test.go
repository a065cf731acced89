package broker

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
)

// TestReplicaFetchMovesTheHighWatermark: the high watermark of a
// partition led here moves only once every ISR member has fetched past
// it, to the smallest of their log ends, and never back.
func TestReplicaFetchMovesTheHighWatermark(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(2))
	tp, p := f.createLed("hw", 1, 2, 3)
	appendRecords(t, p, 10)
	hw := func() base.Offset { return p.Offsets().HighWatermark }
	if hw() != 0 {
		t.Fatalf("high watermark %d before any follower fetched, want 0", hw())
	}
	steps := []struct {
		id     int32
		offset base.Offset
		hw     base.Offset
	}{
		{2, 5, 0},   // 3 has not fetched: it holds the high watermark
		{3, 3, 3},   // both have: the smaller end
		{2, 10, 3},  // 3 still at 3
		{3, 10, 10}, // both at the log end
		{2, 4, 10},  // never back
	}
	for _, s := range steps {
		f.mustFetch(tp, s.id, s.offset, 0)
		if hw() != s.hw {
			t.Fatalf("after %d fetched at %d the high watermark is %d, want %d", s.id, s.offset, hw(), s.hw)
		}
	}
}

// TestReplicaFetchRefusals: a fetch from a broker that is not a follower
// of the partition, from an earlier incarnation of a follower, or of a
// partition not led here is refused; a diverging or out-of-range fetch is
// answered and not recorded.
func TestReplicaFetchRefusals(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("refuse", []int32{1, 2, 3}, []int32{2, 1})
	led := base.TopicPartition{Topic: "refuse", Partition: 0}
	appendRecords(t, f.hosted(led), 4)
	for _, tc := range []struct {
		name string
		f    ReplicaFetch
		want error
	}{
		{"unknown broker", ReplicaFetch{TP: led, ReplicaID: 4}, ErrNotReplica},
		{"the leader itself", ReplicaFetch{TP: led, ReplicaID: 1}, ErrNotReplica},
		{"stale broker epoch", ReplicaFetch{TP: led, ReplicaID: 2, BrokerEpoch: f.epochs[2] - 1, HasBrokerEpoch: true}, ErrStaleBrokerEpoch},
		{"a followed partition", ReplicaFetch{TP: base.TopicPartition{Topic: "refuse", Partition: 1}, ReplicaID: 2}, partition.ErrNotLeader},
		{"an unknown partition", ReplicaFetch{TP: base.TopicPartition{Topic: "refuse", Partition: 7}, ReplicaID: 2}, partition.ErrNotLeader},
	} {
		if _, err := f.b.ReplicaFetch(tc.f); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A fetch carrying no broker epoch (Fetch < v15) is not fenced.
	if _, err := f.b.ReplicaFetch(ReplicaFetch{TP: led, ReplicaID: 2, FetchOffset: 1}); err != nil {
		t.Fatalf("a fetch without a broker epoch: %v", err)
	}

	res, err := f.fetch(led, 3, 6, 0) // epoch 0 ends at 4 here
	if err != nil || res.Verdict != replication.FetchDiverging || res.Diverging != (replication.EpochEnd{Epoch: 0, End: 4}) {
		t.Fatalf("a fetch past the leader's end of its epoch: %+v, %v; want diverging at epoch 0, end 4", res, err)
	}
	if res, err := f.fetch(led, 3, 2, 5); err != nil || res.Verdict != replication.FetchOutOfRange {
		t.Fatalf("a fetch with an epoch the leader never had: %+v, %v; want out of range", res, err)
	}
	if res, err := f.fetch(led, 3, 9, -1); err != nil || res.Verdict != replication.FetchOutOfRange {
		t.Fatalf("a fetch past the log end without an epoch: %+v, %v; want out of range", res, err)
	}
	// None of these moved follower 3: the high watermark waits for it.
	f.mustFetch(led, 2, 4, 0)
	if hw := f.hosted(led).Offsets().HighWatermark; hw != 0 {
		t.Fatalf("high watermark %d, want 0 while follower 3 has not fetched", hw)
	}
}

// TestISRShrinksAndExpandsThroughTheController: a follower that stops
// fetching for replica.lag.time.max.ms is proposed out of the ISR, one
// that catches up again is proposed back in; each change reaches the
// image through AlterPartition, and the partition's in-sync count
// follows the image: with itself alone in the ISR, the leader's appends
// move the high watermark.
func TestISRShrinksAndExpandsThroughTheController(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	tp, p := f.createLed("isr", 1, 2, 3)
	appendRecords(t, p, 3)
	f.mustFetch(tp, 2, 3, 0)
	f.mustFetch(tp, 3, 3, 0)
	if hw := p.Offsets().HighWatermark; hw != 3 {
		t.Fatalf("high watermark %d, want 3", hw)
	}

	// 3 stops fetching; 2 keeps up.
	appendRecords(t, p, 2)
	f.clock.Advance(testLagMax + time.Second)
	f.mustFetch(tp, 2, 5, 0)
	f.b.isrPass()
	f.awaitISR(tp, 1, 2)
	if hw := p.Offsets().HighWatermark; hw != 5 {
		t.Fatalf("high watermark %d once 3 left the ISR, want 5 (2 has it all)", hw)
	}

	// 2 stops too: the leader alone is the ISR, and its appends commit.
	f.clock.Advance(testLagMax + time.Second)
	appendRecords(t, p, 1)
	f.b.isrPass()
	f.awaitISR(tp, 1)
	appendRecords(t, p, 1)
	if off := p.Offsets(); off.HighWatermark != off.LogEnd || off.LogEnd != 7 {
		t.Fatalf("with an ISR of one, offsets %+v; want the high watermark at the log end, 7", off)
	}

	// 3 catches up: it rejoins once at the high watermark.
	f.mustFetch(tp, 3, 7, 0)
	f.awaitISR(tp, 1, 3)
	appendRecords(t, p, 1)
	if hw := p.Offsets().HighWatermark; hw != 7 {
		t.Fatalf("high watermark %d with 3 back in the ISR, want 7 until it fetches", hw)
	}
	f.mustFetch(tp, 3, 8, 0)
	if hw := p.Offsets().HighWatermark; hw != 8 {
		t.Fatalf("high watermark %d after 3 fetched, want 8", hw)
	}
}

// TestFencedFollowerDoesNotJoinTheISR: a caught-up follower whose broker
// is fenced, or whose fetch carries an old broker epoch, is not proposed
// into the ISR (KIP-841, KIP-903), and the high watermark does not wait
// for it.
func TestFencedFollowerDoesNotJoinTheISR(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.fence(3)
	f.createTopic("fenced", []int32{1, 2, 3})
	tp := base.TopicPartition{Topic: "fenced", Partition: 0}
	if isr := f.imagePartition(tp).ISR; !slices.Equal(isr, []int32{1, 2}) {
		t.Fatalf("ISR %v, want [1 2] with 3 fenced", isr)
	}
	f.mustFetch(tp, 3, 0, -1)
	f.b.async.close() // wait for any proposal
	if isr := f.imagePartition(tp).ISR; !slices.Equal(isr, []int32{1, 2}) {
		t.Fatalf("ISR %v after a fenced follower caught up, want [1 2]", isr)
	}
	// Nor does the high watermark wait for it, caught up as it was.
	appendRecords(t, f.hosted(tp), 2)
	f.mustFetch(tp, 2, 2, 0)
	if hw := f.hosted(tp).Offsets().HighWatermark; hw != 2 {
		t.Fatalf("high watermark %d, want 2: fenced 3 is not waited for", hw)
	}
}

// TestReconcileNeverGoesBackToAnOlderImage: once the broker has acted on
// an image, an older one (read by a caller that took the lock later) is
// ignored: it would reopen a partition whose data is gone.
func TestReconcileNeverGoesBackToAnOlderImage(t *testing.T) {
	meta := &overrideMeta{Store: openTestMeta(t)}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.createTopic("old", []int32{1})
	tp := base.TopicPartition{Topic: "old", Partition: 0}
	older := f.meta.Image()
	newer := *older
	newer.Topics, newer.TopicsByID = map[string]*metadata.Topic{}, map[base.TopicID]*metadata.Topic{}
	newer.Version++
	meta.img.Store(&newer)
	f.reconcile()
	if f.isHosted(tp) {
		t.Fatal("a partition of a topic gone from the image is hosted")
	}
	meta.img.Store(older)
	f.reconcile()
	if f.isHosted(tp) {
		t.Fatal("an older image reopened a deleted partition")
	}
	if _, err := os.Stat(f.b.partitionDir(tp)); !os.IsNotExist(err) {
		t.Fatalf("the deleted partition's directory: %v", err)
	}
}

// TestHighWatermarkNeverPassesTheISR is the leader state's property:
// under random appends, fetches by followers 2 and 3 and ISR changes from
// the image, the high watermark never moves back, never passes the log
// end, and never passes the log end of an ISR member, once each has
// fetched in this term.
func TestHighWatermarkNeverPassesTheISR(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "strata-hw-")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		clk := clock.NewManual(time.Unix(1_000_000, 0))
		p, err := partition.Open(partition.Options{Dir: dir, TP: base.TopicPartition{Topic: "p", Partition: 0},
			TopicID: base.TopicID{1}, Config: replicatedConfig(1), Clock: clk})
		if err != nil {
			rt.Fatal(err)
		}
		defer p.Close()
		pa := metadata.Partition{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
		ls := newLeaderState(p, base.TopicID{1}, 1, testLagMax.Milliseconds(), pa, clk.Now().UnixMilli())
		if err := ls.tellInSync(); err != nil {
			rt.Fatal(err)
		}
		brokers := func(id int32) replication.Broker { return replication.Broker{Registered: true, Epoch: 7} }
		fetched := map[int32]base.Offset{}
		last := base.Offset(0)
		for range rapid.IntRange(1, 40).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0:
				if _, _, err := p.Append(keyedBatch("k"), partition.AcksLeader); err != nil {
					rt.Fatal(err)
				}
			case 1, 2:
				id := rapid.Int32Range(2, 3).Draw(rt, "follower")
				off := p.Offsets()
				at := base.Offset(rapid.Int64Range(int64(fetched[id]), int64(off.LogEnd)).Draw(rt, "offset"))
				ls.mu.Lock()
				i := followerIndex(ls.mu.followers, id)
				ls.fetchedLocked(i, ReplicaFetch{FetchOffset: at, BrokerEpoch: 7, HasBrokerEpoch: true}, off, brokers, 1, clk.Now().UnixMilli())
				ls.mu.pending = nil // the controller is not asked here
				if err := ls.tellInSyncLocked(); err != nil {
					rt.Fatal(err)
				}
				ls.mu.Unlock()
				fetched[id] = at
			case 3:
				isr := []int32{1}
				for _, id := range []int32{2, 3} {
					if rapid.Bool().Draw(rt, "in isr") {
						isr = append(isr, id)
					}
				}
				pa.ISR, pa.PartitionEpoch = isr, pa.PartitionEpoch+1
				ls.applyImage(pa, clk.Now().UnixMilli())
				if err := ls.tellInSync(); err != nil {
					rt.Fatal(err)
				}
				ls.advance(brokers, clk.Now().UnixMilli())
			}
			clk.Advance(time.Duration(rapid.IntRange(0, 3000).Draw(rt, "ms")) * time.Millisecond)
			off := p.Offsets()
			if off.HighWatermark < last || off.HighWatermark > off.LogEnd {
				rt.Fatalf("high watermark %d (was %d), log end %d", off.HighWatermark, last, off.LogEnd)
			}
			if len(pa.ISR) > 1 {
				for _, id := range pa.ISR[1:] {
					if at, ok := fetched[id]; ok && off.HighWatermark > max(at, last) {
						rt.Fatalf("high watermark %d passed ISR member %d at %d", off.HighWatermark, id, at)
					}
				}
			}
			last = off.HighWatermark
		}
	})
}

// TestNewLeaderTrustsItsISR: a new leader counts the ISR members as
// caught up from the start of its term (Kafka's resetReplicaState), so
// its first ISR check, before any follower fetched, shrinks nothing.
func TestNewLeaderTrustsItsISR(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("trust", []int32{1, 2, 3})
	tp := base.TopicPartition{Topic: "trust", Partition: 0}
	f.b.isrPass()
	ls, err := f.b.leaderStateOf(tp)
	if err != nil {
		t.Fatal(err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.mu.pending != nil {
		t.Fatalf("a new leader proposed %v before its followers could fetch", ls.mu.pending.isr)
	}
}

// TestLeaderEpochStart: LeaderEpochStart is where this node's leader
// epoch began in the partition's lineage: after a restart in the same
// epoch, where the epoch began, not the log end; after a re-election in a
// later epoch (an image that skipped the term of another leader), the log
// end then. A partition replaced since has none.
func TestLeaderEpochStart(t *testing.T) {
	meta := &overrideMeta{Store: openTestMeta(t)}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.createTopic("epochs", []int32{1, 2})
	tp := base.TopicPartition{Topic: "epochs", Partition: 0}
	before := f.hosted(tp)
	appendRecords(t, before, 5)
	f.restart()
	p := f.hosted(tp)
	if start, ok := f.b.LeaderEpochStart(p); !ok || start != 0 {
		t.Fatalf("after a restart, epoch start %d (%v), want 0", start, ok)
	}
	if _, ok := f.b.LeaderEpochStart(before); ok {
		t.Fatal("the partition closed by the restart has an epoch start")
	}
	appendRecords(t, p, 2)

	meta.serveChanged("epochs", 0, func(pa *metadata.Partition) { pa.LeaderEpoch++; pa.PartitionEpoch++ })
	f.reconcile()
	if start, ok := f.b.LeaderEpochStart(p); !ok || start != 7 {
		t.Fatalf("re-elected in a new epoch, epoch start %d (%v), want the log end 7", start, ok)
	}
}

// TestCheckReplicaFetchRecordsNothing: CheckReplicaFetch, a parked
// fetch's second read, answers as ReplicaFetch does but moves neither the
// follower's state nor the high watermark.
func TestCheckReplicaFetchRecordsNothing(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	tp, p := f.createLed("check", 1, 2)
	appendRecords(t, p, 3)
	res, err := f.b.CheckReplicaFetch(ReplicaFetch{TP: tp, ReplicaID: 2, BrokerEpoch: f.epochs[2], HasBrokerEpoch: true, FetchOffset: 3})
	if err != nil || res.Verdict != replication.FetchFromOffset {
		t.Fatalf("CheckReplicaFetch: %+v, %v", res, err)
	}
	if hw := p.Offsets().HighWatermark; hw != 0 {
		t.Fatalf("high watermark %d after a check, want 0", hw)
	}
}

// TestReplicaFetchBetweenEpochs: a partition that has taken a new leader
// epoch its leader state has not (a role change is half done) refuses
// follower fetches.
func TestReplicaFetchBetweenEpochs(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("between", []int32{1, 2})
	tp := base.TopicPartition{Topic: "between", Partition: 0}
	if err := f.hosted(tp).BecomeLeader(f.imagePartition(tp).LeaderEpoch + 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fetch(tp, 2, 0, -1); !errors.Is(err, partition.ErrNotLeader) {
		t.Fatalf("a fetch between epochs: %v, want ErrNotLeader", err)
	}
}
