package leader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/share"
)

// memPersister keeps states in memory, with the coordinator's fencing, and
// fails on demand: the faults a real coordinator cannot be made to show at
// a chosen moment.
type memPersister struct {
	states      map[Key]Stored
	leaderEpoch map[Key]int32
	reads       int
	writes      int
	failNext    error // the next call fails with it
	// loseInitialize: Initialize succeeds and keeps nothing (another
	// broker initialized the state again in between).
	loseInitialize bool
}

func newMemPersister() *memPersister {
	return &memPersister{states: map[Key]Stored{}, leaderEpoch: map[Key]int32{}}
}

func (p *memPersister) fail() error {
	err := p.failNext
	p.failNext = nil
	return err
}

func (p *memPersister) Read(_ context.Context, key Key, leaderEpoch int32) (Stored, bool, error) {
	if err := p.fail(); err != nil {
		return Stored{}, false, err
	}
	p.reads++
	if leaderEpoch < p.leaderEpoch[key] {
		return Stored{}, false, ErrFenced
	}
	p.leaderEpoch[key] = leaderEpoch
	st, ok := p.states[key]
	return st, ok, nil
}

func (p *memPersister) Initialize(_ context.Context, key Key, stateEpoch int32, start base.Offset) error {
	if err := p.fail(); err != nil {
		return err
	}
	if stateEpoch < p.states[key].StateEpoch {
		return ErrFenced
	}
	if p.loseInitialize {
		return nil
	}
	p.states[key] = Stored{StateEpoch: stateEpoch, HasStart: true, State: share.Persisted{Start: start}}
	return nil
}

func (p *memPersister) Write(_ context.Context, key Key, stateEpoch, leaderEpoch int32, state share.Persisted, _ int64) error {
	if err := p.fail(); err != nil {
		return err
	}
	if stateEpoch < p.states[key].StateEpoch || leaderEpoch < p.leaderEpoch[key] {
		return ErrFenced
	}
	p.writes++
	p.leaderEpoch[key] = leaderEpoch
	p.states[key] = Stored{StateEpoch: stateEpoch, HasStart: true, State: state}
	return nil
}

var (
	t0   = time.Unix(1000, 0)
	key  = Key{Group: "g", Topic: base.TopicID{1}, Partition: 0}
	sets = Settings{Limits: share.Limits{DeliveryLimit: 3, LockDuration: 30 * time.Second, MaxInFlight: 100}}
)

func newManager(t *testing.T, p *memPersister) (*Manager, *clock.Manual) {
	clk := clock.NewManual(t0)
	m, err := New(Options{Persister: p, Clock: clk, ExpiryInterval: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return m, clk
}

// logOf reads a log of single-record batches [0, end) from an offset.
func logOf(end base.Offset) func(base.Offset) (Read, error) {
	return func(from base.Offset) (Read, error) {
		r := Read{Read: share.Read{From: from}}
		for o := from; o < end; o++ {
			r.Batches = append(r.Batches, base.Range{Start: o, End: o + 1})
		}
		return r, nil
	}
}

// acquired is what an Acquire returned, as text; an error fails t.
func acquired(t *testing.T) func([]share.Acquisition, error) string {
	return func(got []share.Acquisition, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
}

func TestLoadChoosesTheStartByResetPolicy(t *testing.T) {
	p := newMemPersister()
	m, _ := newManager(t, p)
	b := Bounds{LogStart: 2, HighWatermark: 10, ReadEnd: 10}
	got := acquired(t)(m.Acquire(context.Background(), key, "a", b, sets, 100, share.BatchOptimized, logOf(12)))
	if got != "[]" || p.states[key].State.Start != 10 {
		t.Fatalf("latest: acquired %s, stored %+v", got, p.states[key])
	}
	earliest := sets
	earliest.Reset = func(b Bounds) (base.Offset, error) { return b.LogStart, nil }
	other := Key{Group: "h", Topic: key.Topic}
	got = acquired(t)(m.Acquire(context.Background(), other, "a", b, earliest, 3, share.BatchOptimized, logOf(10)))
	if got != "[{[2, 5) 1}]" || p.states[other].State.Start != 2 {
		t.Fatalf("earliest: acquired %s, stored %+v", got, p.states[other])
	}
	// Each load reads, initializes, and reads back; later uses read nothing.
	acquired(t)(m.Acquire(context.Background(), key, "a", b, sets, 100, share.BatchOptimized, logOf(12)))
	if p.reads != 4 {
		t.Fatalf("%d reads of the coordinator for two loads", p.reads)
	}
}

func TestAcknowledgeIsWrittenBeforeItCounts(t *testing.T) {
	p := newMemPersister()
	m, _ := newManager(t, p)
	earliest := sets
	earliest.Reset = func(b Bounds) (base.Offset, error) { return b.LogStart, nil }
	b := Bounds{HighWatermark: 6, ReadEnd: 6}
	ctx := context.Background()
	if got := acquired(t)(m.Acquire(ctx, key, "a", b, earliest, 4, share.BatchOptimized, logOf(6))); got != "[{[0, 4) 1}]" {
		t.Fatalf("a acquired %s", got)
	}
	if got := acquired(t)(m.Acquire(ctx, key, "b", b, earliest, 4, share.BatchOptimized, logOf(6))); got != "[{[4, 6) 1}]" {
		t.Fatalf("b acquired %s (a holds [0, 4))", got)
	}
	accept := []share.Ack{{Offsets: base.Range{Start: 0, End: 2}, Types: []share.AckType{share.AckAccept}}}
	p.failNext = errors.New("coordinator not available")
	if err := m.Acknowledge(ctx, key, "a", b, earliest, accept); err == nil {
		t.Fatal("an acknowledgement whose write failed succeeded")
	}
	if err := m.Acknowledge(ctx, key, "a", b, earliest, accept); err != nil {
		t.Fatalf("the acknowledgement again, after the failed write: %v", err)
	}
	if st := p.states[key].State; st.Start != 2 {
		t.Fatalf("stored %+v; want the start past the accepted records", st)
	}
	if err := m.Acknowledge(ctx, key, "b", b, earliest, []share.Ack{{Offsets: base.Range{Start: 2, End: 3}, Types: []share.AckType{share.AckAccept}}}); !errors.Is(err, share.ErrInvalidRecordState) {
		t.Fatalf("b acknowledged a's record: %v", err)
	}
}

func TestReleasesAreWrittenAndWakeFetches(t *testing.T) {
	p := newMemPersister()
	m, clk := newManager(t, p)
	earliest := sets
	earliest.Reset = func(b Bounds) (base.Offset, error) { return b.LogStart, nil }
	b := Bounds{HighWatermark: 4, ReadEnd: 4}
	ctx := context.Background()
	acquired(t)(m.Acquire(ctx, key, "a", b, earliest, 2, share.BatchOptimized, logOf(4)))
	acquired(t)(m.Acquire(ctx, key, "b", b, earliest, 2, share.BatchOptimized, logOf(4)))
	changed := m.Changed()
	m.ReleaseMember(ctx, "g", "a")
	select {
	case <-changed:
	default:
		t.Fatal("a release did not signal")
	}
	// b's acquired records are written as available: locks are not kept.
	if got := p.states[key].State.Batches; fmt.Sprint(got) != "[{[0, 4) available 1}]" {
		t.Fatalf("stored %v after a's release", got)
	}
	// b's lock expires; a takes everything, delivered twice.
	clk.Advance(sets.Limits.LockDuration)
	m.ExpireLocks(ctx)
	if got := acquired(t)(m.Acquire(ctx, key, "a", b, earliest, 10, share.BatchOptimized, logOf(4))); got != "[{[0, 4) 2}]" {
		t.Fatalf("after the release and the expiry: %s", got)
	}
}

// A broker that initializes a share-partition after it lost the leadership
// is fenced: it never overwrites the new leader's state.
func TestLateInitializeIsFenced(t *testing.T) {
	p := newMemPersister()
	p.states[key] = Stored{StateEpoch: 3, HasStart: true, State: share.Persisted{Start: 7}}
	m, _ := newManager(t, p)
	// The old leader (epoch 1) read no state before the new one (epoch 2)
	// initialized and wrote at state epoch 3.
	if err := m.initialize(context.Background(), key, Stored{}, false, Bounds{HighWatermark: 9, ReadEnd: 9, LeaderEpoch: 1}, sets); !errors.Is(err, ErrFenced) {
		t.Fatalf("late initialize: %v", err)
	}
	if p.states[key].State.Start != 7 {
		t.Fatalf("stored %+v", p.states[key])
	}
}

// A new leadership loads what the coordinator holds: the locks of the
// previous one are gone, its written acknowledgements stay.
func TestNewLeaderEpochLoadsAgain(t *testing.T) {
	p := newMemPersister()
	m, _ := newManager(t, p)
	earliest := sets
	earliest.Reset = func(b Bounds) (base.Offset, error) { return b.LogStart, nil }
	ctx := context.Background()
	b := Bounds{HighWatermark: 4, ReadEnd: 4, LeaderEpoch: 1}
	acquired(t)(m.Acquire(ctx, key, "a", b, earliest, 10, share.BatchOptimized, logOf(4)))
	if err := m.Acknowledge(ctx, key, "a", b, earliest, []share.Ack{{Offsets: base.Range{Start: 0, End: 1}, Types: []share.AckType{share.AckAccept}}}); err != nil {
		t.Fatal(err)
	}
	b.LeaderEpoch = 2
	if got := acquired(t)(m.Acquire(ctx, key, "b", b, earliest, 10, share.BatchOptimized, logOf(4))); got != "[{[1, 4) 2}]" {
		t.Fatalf("after the leader epoch moved: %s", got)
	}
	// The old leadership's write is fenced, and the share-partition is
	// loaded again at its next use.
	b.LeaderEpoch = 1
	err := m.Acknowledge(ctx, key, "b", b, earliest, []share.Ack{{Offsets: base.Range{Start: 1, End: 2}, Types: []share.AckType{share.AckAccept}}})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("an acknowledgement at the old leader epoch: %v", err)
	}
}

func TestLogStartPastTheShareStart(t *testing.T) {
	p := newMemPersister()
	m, _ := newManager(t, p)
	earliest := sets
	earliest.Reset = func(b Bounds) (base.Offset, error) { return b.LogStart, nil }
	ctx := context.Background()
	acquired(t)(m.Acquire(ctx, key, "a", Bounds{HighWatermark: 4, ReadEnd: 4}, earliest, 2, share.BatchOptimized, logOf(4)))
	got := acquired(t)(m.Acquire(ctx, key, "b", Bounds{LogStart: 3, HighWatermark: 6, ReadEnd: 6}, earliest, 10, share.BatchOptimized, logOf(6)))
	if got != "[{[3, 6) 1}]" {
		t.Fatalf("after the log start moved to 3: %s", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	good := Options{Persister: newMemPersister(), Clock: clock.NewManual(t0), ExpiryInterval: time.Nanosecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	for name, bad := range map[string]func(*Options){
		"no persister":      func(o *Options) { o.Persister = nil },
		"no clock":          func(o *Options) { o.Clock = nil },
		"zero expiry":       func(o *Options) { o.ExpiryInterval = 0 },
		"no logger":         func(o *Options) { o.Logger = nil },
		"a negative expiry": func(o *Options) { o.ExpiryInterval = -time.Second },
	} {
		o := good
		bad(&o)
		if o.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A state the coordinator holds without a start offset is initialized
// (at its own state epoch, when that is higher than the leader epoch
// plus one); a new one at the leader epoch plus one.
func TestInitializeWhereNoStartIsHeld(t *testing.T) {
	p := newMemPersister()
	p.states[key] = Stored{StateEpoch: 5}
	m, _ := newManager(t, p)
	b := Bounds{HighWatermark: 10, ReadEnd: 10, LeaderEpoch: 2}
	if got := acquired(t)(m.Acquire(context.Background(), key, "a", b, sets, 100, share.BatchOptimized, logOf(12))); got != "[]" {
		t.Fatalf("acquired %s; want nothing, the start at the high watermark", got)
	}
	if st := p.states[key]; !st.HasStart || st.State.Start != 10 || st.StateEpoch != 5 {
		t.Fatalf("stored %+v", st)
	}
	fresh := Key{Group: "g", Topic: key.Topic, Partition: 1}
	acquired(t)(m.Acquire(context.Background(), fresh, "a", b, sets, 100, share.BatchOptimized, logOf(12)))
	if st := p.states[fresh]; st.StateEpoch != 3 {
		t.Fatalf("a new state at state epoch %d, want leader epoch 2 plus one", st.StateEpoch)
	}
}

// An Initialize the coordinator did not keep fails the use; the next one
// tries again.
func TestInitializeNotKept(t *testing.T) {
	for name, held := range map[string]*Stored{"no state": nil, "a state without a start": {StateEpoch: 1}} {
		p := newMemPersister()
		if held != nil {
			p.states[key] = *held
		}
		p.loseInitialize = true
		m, _ := newManager(t, p)
		b := Bounds{HighWatermark: 4, ReadEnd: 4}
		if _, err := m.Acquire(context.Background(), key, "a", b, sets, 100, share.BatchOptimized, logOf(4)); !errors.Is(err, errNotInitialized) {
			t.Fatalf("%s: got %v, want errNotInitialized", name, err)
		}
		p.loseInitialize = false
		acquired(t)(m.Acquire(context.Background(), key, "a", b, sets, 100, share.BatchOptimized, logOf(4)))
		if !p.states[key].HasStart {
			t.Fatalf("%s: the next use did not initialize", name)
		}
	}
}

// DropPartition and DropGroup forget just the share-partitions they name:
// those load again at their next use, the others do not.
func TestDropForgetsWhatItNames(t *testing.T) {
	p := newMemPersister()
	m, _ := newManager(t, p)
	ctx := context.Background()
	b := Bounds{HighWatermark: 4, ReadEnd: 4}
	otherTopic := base.TopicID{2}
	keys := []Key{key, {Group: "g", Topic: key.Topic, Partition: 1}, {Group: "g", Topic: otherTopic, Partition: 0}, {Group: "h", Topic: key.Topic, Partition: 0}}
	use := func() (loaded []int) {
		for i, k := range keys {
			before := p.reads
			acquired(t)(m.Acquire(ctx, k, "a", b, sets, 1, share.BatchOptimized, logOf(4)))
			if p.reads > before {
				loaded = append(loaded, i)
			}
		}
		return loaded
	}
	use()
	if got := use(); len(got) != 0 {
		t.Fatalf("loaded %v again with nothing dropped", got)
	}
	m.DropPartition(key.Topic, 0)
	if got := fmt.Sprint(use()); got != "[0 3]" {
		t.Fatalf("after DropPartition(topic 1, 0): loaded %s, want [0 3]", got)
	}
	m.DropGroup("g")
	if got := fmt.Sprint(use()); got != "[0 1 2]" {
		t.Fatalf("after DropGroup(g): loaded %s, want [0 1 2]", got)
	}
}
