package broker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
)

// scriptedAlterMeta answers the first AlterPartitions with its errors,
// then passes them on to the store. With hold set, each waits for hold to
// close (or its context to end) first: the change stays in flight.
type scriptedAlterMeta struct {
	*metadata.Store
	hold  chan struct{}
	mu    sync.Mutex
	errs  []error
	calls int
}

func (m *scriptedAlterMeta) AlterPartition(ctx context.Context, c metadata.ISRChange) (metadata.Partition, error) {
	m.mu.Lock()
	m.calls++
	var err error
	if len(m.errs) > 0 {
		err, m.errs = m.errs[0], m.errs[1:]
	}
	m.mu.Unlock()
	if m.hold != nil {
		select {
		case <-m.hold:
		case <-ctx.Done():
			return metadata.Partition{}, ctx.Err()
		}
	}
	if err != nil {
		return metadata.Partition{}, err
	}
	return m.Store.AlterPartition(ctx, c)
}

// propose makes the leader state of tp propose isr, planned against
// the current image, as its ISR check would.
func (f *replicationFixture) propose(tp base.TopicPartition, isr ...int32) (*leaderState, *isrChange) {
	f.t.Helper()
	ls, err := f.b.leaderStateOf(tp)
	if err != nil {
		f.t.Fatal(err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !ls.mayProposeLocked(f.meta.Image().Version) {
		f.t.Fatalf("%v may not propose an ISR change", tp)
	}
	return ls, ls.proposeLocked(isr, f.meta.Image().Version)
}

// TestISRChangeOutcomes: an ISR change the controller refuses ends at
// once and holds back proposals until the image is newer than the one it
// was planned against; one that finds no controller is sent again until
// one answers.
func TestISRChangeOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantISR   []int32
		blocked   bool
	}{
		{"refused", []error{metadata.ErrInvalidUpdateVersion}, 1, []int32{1, 2, 3}, true},
		{"no controller, then applied", []error{metadata.ErrNotController}, 2, []int32{1, 2}, false},
		{"applied", nil, 1, []int32{1, 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := &scriptedAlterMeta{Store: openTestMeta(t), errs: tc.errs}
			f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
			f.createTopic("isr", []int32{1, 2, 3})
			tp := base.TopicPartition{Topic: "isr", Partition: 0}
			ls, c := f.propose(tp, 1, 2)
			f.b.runISRChange(t.Context(), ls, c)
			if meta.calls != tc.wantCalls {
				t.Fatalf("AlterPartition called %d times, want %d", meta.calls, tc.wantCalls)
			}
			if isr := f.imagePartition(tp).ISR; !slices.Equal(isr, tc.wantISR) {
				t.Fatalf("ISR %v, want %v", isr, tc.wantISR)
			}
			f.reconcile()
			ls.mu.Lock()
			defer ls.mu.Unlock()
			if ls.mu.pending != nil {
				t.Fatalf("the change %+v is still in flight", ls.mu.pending)
			}
			if got := !ls.mayProposeLocked(c.planned); got != tc.blocked {
				t.Fatalf("proposals against the image the change was planned on held back: %v, want %v", got, tc.blocked)
			}
			if !ls.mayProposeLocked(c.planned + 1) {
				t.Fatal("a newer image may not propose")
			}
		})
	}
}

// awaitNoChangeInFlight waits until the leader state of tp has no ISR
// change in flight (a proposal goes to the quorum on a goroutine of its
// own).
func (f *replicationFixture) awaitNoChangeInFlight(tp base.TopicPartition) *leaderState {
	f.t.Helper()
	ls, err := f.b.leaderStateOf(tp)
	if err != nil {
		f.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls.mu.Lock()
		pending := ls.mu.pending
		ls.mu.Unlock()
		if pending == nil {
			return ls
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the ISR change %+v of %v is still in flight", pending, tp)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestISRPassMovesTheHighWatermark: a caught-up follower outside the ISR
// holds the high watermark at its log end while it is about to join; once
// it falls behind for replica.lag.time.max.ms, the ISR check moves the
// high watermark past it with no fetch to do so. After a refusal, nothing
// is proposed against the same image.
func TestISRPassMovesTheHighWatermark(t *testing.T) {
	// The controller refuses 3's expansion: it stays out of the ISR, and no
	// change is proposed again against this image.
	meta := &scriptedAlterMeta{Store: openTestMeta(t), errs: []error{metadata.ErrInvalidUpdateVersion}}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.fence(3)
	f.createTopic("lag", []int32{1, 2, 3})
	f.unfence(3)
	tp := base.TopicPartition{Topic: "lag", Partition: 0}
	p := f.hosted(tp)
	appendRecords(t, p, 3)
	f.mustFetch(tp, 2, 3, 0)
	f.mustFetch(tp, 3, 3, 0)
	f.awaitNoChangeInFlight(tp)
	f.mustFetch(tp, 3, 3, 0) // against the same image: not proposed again
	appendRecords(t, p, 2)
	f.mustFetch(tp, 2, 5, 0)
	if hw := p.Offsets().HighWatermark; hw != 3 {
		t.Fatalf("high watermark %d, want 3: caught-up follower 3 holds it", hw)
	}
	f.clock.Advance(testLagMax + time.Second)
	appendRecords(t, p, 1) // 2 is out of sync too
	f.b.isrPass()
	if hw := p.Offsets().HighWatermark; hw != 5 {
		t.Fatalf("high watermark %d after the ISR check, want 5: 3 is no longer caught up", hw)
	}
	// The image is still the one the refused change was planned against:
	// 2 is not proposed out of the ISR either.
	f.b.async.close() // waits for any proposal
	if meta.calls != 1 {
		t.Fatalf("%d ISR changes proposed, want only the refused one", meta.calls)
	}
}

// TestRetiredLeaderProposesNothing: a change in flight when the leader
// state retires (this node no longer leads with it) is not sent.
func TestRetiredLeaderProposesNothing(t *testing.T) {
	meta := &scriptedAlterMeta{Store: openTestMeta(t)}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.createTopic("retired", []int32{1, 2, 3})
	ls, c := f.propose(base.TopicPartition{Topic: "retired", Partition: 0}, 1, 2)
	ls.retire()
	f.b.runISRChange(t.Context(), ls, c)
	if meta.calls != 0 {
		t.Fatalf("a retired leader state sent its change %d times", meta.calls)
	}
}

// TestExpansionInFlightCountsInSync: while a follower's entry into the
// ISR is in flight, the partition counts it in sync (the maximal ISR):
// acks=all appends are taken, and AcksAllDone does not answer
// NOT_ENOUGH_REPLICAS_AFTER_APPEND, with min.insync.replicas at 3; the
// high watermark still waits for the committed ISR. Once the change is
// refused, the partition counts the committed ISR again.
func TestExpansionInFlightCountsInSync(t *testing.T) {
	meta := &scriptedAlterMeta{Store: openTestMeta(t), hold: make(chan struct{}), errs: []error{metadata.ErrInvalidUpdateVersion}}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(3))
	f.fence(3)
	f.createTopic("grow", []int32{1, 2, 3})
	f.unfence(3)
	tp := base.TopicPartition{Topic: "grow", Partition: 0}
	p := f.hosted(tp)
	if _, _, err := p.Append(keyedBatch("k"), partition.AcksAll); !errors.Is(err, partition.ErrNotEnoughReplicas) {
		t.Fatalf("acks=all append with an ISR of 2: %v, want ErrNotEnoughReplicas", err)
	}
	if _, err := f.b.AcksAllDone(p, 0); !errors.Is(err, ErrNotEnoughReplicasAfterAppend) {
		t.Fatalf("AcksAllDone with an ISR of 2: %v, want ErrNotEnoughReplicasAfterAppend", err)
	}
	f.mustFetch(tp, 3, 0, -1) // caught up: proposed, held in flight
	if _, _, err := p.Append(keyedBatch("k"), partition.AcksAll); err != nil {
		t.Fatalf("acks=all append with 3 joining: %v", err)
	}
	if done, err := f.b.AcksAllDone(p, 0); !done || err != nil {
		t.Fatalf("AcksAllDone with 3 joining: %v, %v", done, err)
	}
	ls, err := f.b.leaderStateOf(tp)
	if err != nil {
		t.Fatal(err)
	}
	ls.mu.Lock()
	inFlight := ls.mu.pending
	ls.mu.Unlock()
	// Both followers have the batch, but the committed ISR is still below
	// min.insync.replicas: the high watermark waits for the image (Kafka's
	// KAFKA-15583). Nothing more is proposed meanwhile.
	f.mustFetch(tp, 2, 1, 0)
	f.mustFetch(tp, 3, 1, 0)
	if hw := p.Offsets().HighWatermark; hw != 0 {
		t.Fatalf("high watermark %d with an ISR of 2, want 0", hw)
	}
	ls.mu.Lock()
	pending := ls.mu.pending
	ls.mu.Unlock()
	if pending != inFlight {
		t.Fatalf("a change %v proposed while %v is in flight", pending.isr, inFlight.isr)
	}
	// The controller refuses it: the partition counts the ISR of 2 again.
	close(meta.hold)
	f.awaitNoChangeInFlight(tp)
	if _, _, err := p.Append(keyedBatch("k"), partition.AcksAll); !errors.Is(err, partition.ErrNotEnoughReplicas) {
		t.Fatalf("acks=all append once 3's entry was refused: %v, want ErrNotEnoughReplicas", err)
	}
}

// TestFetchProposesOnlyRealChanges: a caught-up fetch by an ISR member,
// one by a follower behind the high watermark, or one by a follower whose
// fetch carries no broker epoch (Fetch < v15, never eligible, whatever
// its BrokerEpoch field holds) proposes no ISR change.
func TestFetchProposesOnlyRealChanges(t *testing.T) {
	meta := &scriptedAlterMeta{Store: openTestMeta(t)}
	f := newReplicationFixtureOn(t, meta, replicatedConfig(1))
	f.fence(3)
	f.createTopic("quiet", []int32{1, 2, 3})
	f.unfence(3)
	tp := base.TopicPartition{Topic: "quiet", Partition: 0}
	appendRecords(t, f.hosted(tp), 2)
	f.mustFetch(tp, 2, 2, 0)
	f.mustFetch(tp, 3, 0, 0) // behind the high watermark
	if _, err := f.b.ReplicaFetch(ReplicaFetch{TP: tp, ReplicaID: 3, BrokerEpoch: f.epochs[3], FetchOffset: 2}); err != nil {
		t.Fatal(err)
	}
	f.b.async.close() // waits for any proposal
	if meta.calls != 0 {
		t.Fatalf("%d ISR changes proposed, want none", meta.calls)
	}
}

// TestStaleAnswerChangesNothing: the controller's answer to a change that
// is no longer in flight (the image ended it, and another was proposed)
// neither ends the new one nor holds proposals back.
func TestStaleAnswerChangesNothing(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("stale", []int32{1, 2, 3})
	tp := base.TopicPartition{Topic: "stale", Partition: 0}
	ls, old := f.propose(tp, 1, 2)
	ls.mu.Lock()
	ls.mu.pending = nil // as an image with its outcome does
	ls.mu.Unlock()
	_, cur := f.propose(tp, 1, 3)
	ls.answered(old, metadata.Partition{}, metadata.ErrInvalidUpdateVersion)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.mu.pending != cur || ls.mu.blockedThrough != 0 {
		t.Fatalf("after a stale answer: in flight %v, blocked through %d; want %v, 0", ls.mu.pending, ls.mu.blockedThrough, cur.isr)
	}
}

// TestAnswerSettlesTheChange: the controller's answer ends the change in
// flight when it was refused (holding proposals back until a newer
// image) or changed nothing (the ISR was that already); an applied change
// stays in flight until the image has it.
func TestAnswerSettlesTheChange(t *testing.T) {
	f := newReplicationFixture(t, replicatedConfig(1))
	f.createTopic("answer", []int32{1, 2, 3})
	tp := base.TopicPartition{Topic: "answer", Partition: 0}
	for _, tc := range []struct {
		name     string
		peDelta  int32
		err      error
		inFlight bool
		blocked  bool
	}{
		{"applied", 1, nil, true, false},
		{"nothing to change", 0, nil, false, false},
		{"refused", 0, metadata.ErrInvalidUpdateVersion, false, true},
	} {
		ls, c := f.propose(tp, 1, 2)
		ls.answered(c, metadata.Partition{PartitionEpoch: c.partitionEpoch + tc.peDelta}, tc.err)
		ls.mu.Lock()
		inFlight, blocked := ls.mu.pending == c, !ls.mayProposeLocked(c.planned) && ls.mu.pending == nil
		ls.mu.pending, ls.mu.blockedThrough = nil, 0
		ls.mu.Unlock()
		if inFlight != tc.inFlight || blocked != tc.blocked {
			t.Errorf("%s: in flight %v, blocked %v; want %v, %v", tc.name, inFlight, blocked, tc.inFlight, tc.blocked)
		}
	}
}
