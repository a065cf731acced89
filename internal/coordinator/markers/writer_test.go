package markers

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/goleak"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/txn"
	"github.com/strata-broker/strata/internal/partition/producers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// world is the Writer's surroundings: data partitions whose appends and
// durability waits fail as scripted, and runtimes that answer events as
// scripted. Every call is logged, with the coordinator epoch of every
// marker and the answer of every durability wait.
type world struct {
	mu sync.Mutex
	// calls is the log; a scripted answer is the first of failures[call]
	// (by the name a call is logged under; a durability wait's
	// "durable <partition>"), nil when there is none.
	calls    []string
	failures map[string][]error
	gate     chan struct{} // when set, data partition appends wait for it
	deleted  map[string]bool
	// elsewhere holds the __consumer_offsets partitions led by another
	// broker.
	elsewhere map[int32]bool
	// afterPartition, when set, runs after each Partition lookup.
	afterPartition func(tp base.TopicPartition)
	done           chan string // MarkersWritten, once taken
	// held, when set, takes every MarkersWritten instead of the script:
	// the test answers it.
	held chan submitted
}

// submitted is a MarkersWritten the Writer handed to the transaction
// runtime; the test answers it.
type submitted struct {
	ev   txn.MarkersWritten
	done func(error)
}

func newWorld() *world {
	return &world{failures: map[string][]error{}, deleted: map[string]bool{}, elsewhere: map[int32]bool{}, done: make(chan string, 10)}
}

// next logs call and returns its scripted answer.
func (w *world) next(call string) error {
	w.record(call)
	return w.scripted(call)
}

func (w *world) record(call string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, call)
}

// scripted returns the scripted answer of call without logging it.
func (w *world) scripted(call string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f := w.failures[call]; len(f) > 0 {
		w.failures[call] = f[1:]
		return f[0]
	}
	return nil
}

type appender struct {
	w  *world
	tp base.TopicPartition
}

func (a appender) AppendMarker(pid base.ProducerID, epoch int16, commit bool, coordinatorEpoch int32) (base.Offset, func() error, error) {
	a.w.mu.Lock()
	gate := a.w.gate
	a.w.mu.Unlock()
	if gate != nil {
		<-gate
	}
	err := a.w.next(fmt.Sprintf("marker %v pid=%d epoch=%d commit=%v coordinator=%d", a.tp, pid, epoch, commit, coordinatorEpoch))
	return 0, func() error {
		call := fmt.Sprintf("durable %v", a.tp)
		err := a.w.scripted(call)
		a.w.record(fmt.Sprintf("%s: %v", call, err))
		return err
	}, err
}

func (w *world) writer(t *testing.T) *Writer {
	t.Helper()
	wr, err := New(Options{
		Partition: func(tp base.TopicPartition) (MarkerAppender, error) {
			if w.afterPartition != nil {
				defer w.afterPartition(tp)
			}
			if err := w.scripted("partition " + tp.String()); err != nil {
				return nil, err
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.deleted[tp.String()] {
				return nil, ErrPartitionGone
			}
			return appender{w, tp}, nil
		},
		GroupsTopic: "__consumer_offsets",
		GroupLedElsewhere: func(p int32) bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.elsewhere[p]
		},
		SubmitGroupEvent: func(p int32, ev any, done func(error)) {
			e := ev.(group.TxnCompleted)
			done(w.next(fmt.Sprintf("group %d pid=%d epoch=%d commit=%v coordinator=%d", p, e.ProducerID, e.ProducerEpoch, e.Commit, e.CoordinatorEpoch)))
		},
		SubmitTxnEvent: func(p int32, ev any, done func(error)) {
			e := ev.(txn.MarkersWritten)
			call := fmt.Sprintf("written %s epoch=%d", e.TransactionalID, e.ProducerEpoch)
			if w.held != nil {
				w.record(call)
				w.held <- submitted{e, done}
				return
			}
			err := w.next(call)
			if err == nil {
				w.done <- e.TransactionalID
			}
			done(err)
		},
		RetryBackoff: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wr.Close)
	return wr
}

func (w *world) waitDone(t *testing.T, id string) {
	t.Helper()
	select {
	case got := <-w.done:
		if got != id {
			t.Fatalf("completed %q, want %q", got, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s never completed; calls %q", id, w.log())
	}
}

// waitDoneAll waits for the completion of every id, in any order.
func (w *world) waitDoneAll(t *testing.T, ids ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for len(want) > 0 {
		select {
		case got := <-w.done:
			if !want[got] {
				t.Fatalf("completed %q, want one of %v", got, want)
			}
			delete(want, got)
		case <-time.After(5 * time.Second):
			t.Fatalf("%v never completed; calls %q", want, w.log())
		}
	}
}

// nextHeld returns the next MarkersWritten the Writer submits to held
// (failing after a generous watchdog rather than hanging).
func (w *world) nextHeld(t *testing.T) submitted {
	t.Helper()
	select {
	case s := <-w.held:
		return s
	case <-time.After(time.Minute):
		t.Fatalf("no MarkersWritten submitted; calls %q", w.log())
	}
	return submitted{}
}

func (w *world) log() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls)
}

// wantCalls fails the test unless the log is exactly want.
func (w *world) wantCalls(t *testing.T, want ...string) {
	t.Helper()
	if got := w.log(); !slices.Equal(got, want) {
		t.Fatalf("calls\n%q\nwant\n%q", got, want)
	}
}

func effect(id string, commit bool, tps ...base.TopicPartition) txn.WriteMarkers {
	return txn.WriteMarkers{TransactionalID: id, ProducerID: 7, ProducerEpoch: 2, CoordinatorEpoch: 1, Commit: commit, Partitions: tps}
}

var (
	orders0 = base.TopicPartition{Topic: "orders", Partition: 0}
	orders1 = base.TopicPartition{Topic: "orders", Partition: 1}
	groups3 = base.TopicPartition{Topic: "__consumer_offsets", Partition: 3}
)

// firstThenQueued is the log of effect("t1", true, orders0) written, then
// of the effect queued behind it (epoch 3, aborting).
var firstThenQueued = []string{
	"marker orders-0 pid=7 epoch=2 commit=true coordinator=1",
	"durable orders-0: <nil>",
	"written t1 epoch=2",
	"marker orders-0 pid=7 epoch=3 commit=false coordinator=1",
	"durable orders-0: <nil>",
	"written t1 epoch=3",
}

func TestWritesEveryMarkerThenCompletes(t *testing.T) {
	w := newWorld()
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, orders0, groups3, orders1)})
	w.waitDone(t, "t1")
	w.wantCalls(t,
		"marker orders-0 pid=7 epoch=2 commit=true coordinator=1",
		"durable orders-0: <nil>",
		"group 3 pid=7 epoch=2 commit=true coordinator=1",
		"marker orders-1 pid=7 epoch=2 commit=true coordinator=1",
		"durable orders-1: <nil>",
		"written t1 epoch=2",
	)
}

func TestFailedMarkersAreRetriedAndGoneOnesSkipped(t *testing.T) {
	w := newWorld()
	w.failures["marker orders-0 pid=7 epoch=2 commit=false coordinator=1"] = []error{errors.New("disk"), errors.New("disk")}
	w.failures["group 3 pid=7 epoch=2 commit=false coordinator=1"] = []error{&runtime.CodeError{Code: kerr.CoordinatorLoadInProgress.Code}, fmt.Errorf("wrapped: %w", group.ErrStaleMarker)}
	w.failures["written t1 epoch=2"] = []error{&runtime.CodeError{Code: kerr.CoordinatorLoadInProgress.Code}}
	w.failures["marker orders-1 pid=7 epoch=2 commit=false coordinator=1"] = []error{producers.ErrInvalidProducerEpoch}
	w.deleted["gone-0"] = true
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", false, orders0, groups3, orders1, base.TopicPartition{Topic: "gone"})})
	w.waitDone(t, "t1")
	w.wantCalls(t,
		"marker orders-0 pid=7 epoch=2 commit=false coordinator=1",
		"marker orders-0 pid=7 epoch=2 commit=false coordinator=1",
		"marker orders-0 pid=7 epoch=2 commit=false coordinator=1",
		"durable orders-0: <nil>",
		"group 3 pid=7 epoch=2 commit=false coordinator=1",
		"group 3 pid=7 epoch=2 commit=false coordinator=1", // stale: skipped
		"marker orders-1 pid=7 epoch=2 commit=false coordinator=1",
		"written t1 epoch=2",
		"written t1 epoch=2",
	)
}

func TestAnIdenticalEffectJoinsTheWriteInFlight(t *testing.T) {
	w := newWorld()
	gate := make(chan struct{})
	w.gate = gate
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	wr.OnEffects(5, []any{effect("t1", true, orders0)}) // a reload emits it again
	wr.OnEffects(5, []any{effect("t2", true, orders1)}) // another id flies on its own
	close(gate)
	w.waitDoneAll(t, "t1", "t2")
	time.Sleep(20 * time.Millisecond)
	if got := w.log(); len(got) != 6 { // a marker, its durability wait and MarkersWritten each
		t.Fatalf("calls %q: want one write per transaction", got)
	}
}

func TestADifferentEffectWaitsForTheWriteInFlight(t *testing.T) {
	w := newWorld()
	gate := make(chan struct{})
	w.gate = gate
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	next := effect("t1", false, orders0)
	next.ProducerEpoch = 3
	wr.OnEffects(5, []any{next})
	close(gate)
	w.waitDone(t, "t1")
	w.waitDone(t, "t1")
	w.wantCalls(t, firstThenQueued...)
}

func TestNotCoordinatorEndsTheWrite(t *testing.T) {
	w := newWorld()
	w.failures["written t1 epoch=2"] = []error{&runtime.CodeError{Code: kerr.NotCoordinator.Code}}
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	// The refused MarkersWritten is logged just before the write ends:
	// wait for the flight itself to be gone.
	deadline := time.Now().Add(5 * time.Second)
	for inFlight(wr, "t1") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	wr.OnEffects(5, []any{effect("t1", true, orders0)}) // the flight has ended: a new one starts
	w.waitDone(t, "t1")
}

// inFlight says whether wr has a write in progress for the transactional id.
func inFlight(wr *Writer, id string) bool {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	return wr.mu.flights[id] != nil
}

func TestCloseStopsRetries(t *testing.T) {
	w := newWorld()
	w.failures["marker orders-0 pid=7 epoch=2 commit=true coordinator=1"] = slices.Repeat([]error{errors.New("disk")}, 1000)
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	time.Sleep(10 * time.Millisecond)
	wr.Close()
	wr.OnEffects(5, []any{effect("t2", true, orders0)}) // dropped after Close
	select {
	case id := <-w.done:
		t.Fatalf("%s completed after Close", id)
	default:
	}
}

// Regression: at start the transaction coordinator loads and re-emits its
// markers while the broker is still opening partitions; the lookup then
// fails and the marker must be retried, not skipped as if deleted (the
// broker crashed on a nil broker before the lookup could say so).
func TestPartitionNotYetOpenIsRetried(t *testing.T) {
	w := newWorld()
	w.failures["partition orders-0"] = []error{errors.New("the broker is starting"), errors.New("the broker is starting")}
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	w.waitDone(t, "t1")
	w.wantCalls(t, "marker orders-0 pid=7 epoch=2 commit=true coordinator=1", "durable orders-0: <nil>", "written t1 epoch=2")
}

// A __consumer_offsets partition led by another broker is no business of
// the group coordinator here: its marker goes through Partition (which
// sends it to the leader), retried and skipped by the same rules as a data
// partition's; one led here goes to the group coordinator. When its
// leadership comes here between two attempts, the next attempt takes the
// local path.
func TestGroupPartitionLedElsewhereGoesThroughPartition(t *testing.T) {
	w := newWorld()
	groups4 := base.TopicPartition{Topic: "__consumer_offsets", Partition: 4}
	groups5 := base.TopicPartition{Topic: "__consumer_offsets", Partition: 5}
	w.elsewhere[3], w.elsewhere[4], w.elsewhere[5] = true, true, true
	w.failures["marker __consumer_offsets-3 pid=7 epoch=2 commit=true coordinator=1"] = []error{errors.New("NOT_LEADER_OR_FOLLOWER from broker 2")}
	w.failures["marker __consumer_offsets-4 pid=7 epoch=2 commit=true coordinator=1"] = []error{fmt.Errorf("broker 2: %w", producers.ErrInvalidProducerEpoch)}
	w.failures["partition __consumer_offsets-5"] = []error{errors.New("no leader")}
	w.afterPartition = func(tp base.TopicPartition) {
		if tp == groups5 { // its leadership comes here once it was asked about
			w.mu.Lock()
			delete(w.elsewhere, 5)
			w.mu.Unlock()
		}
	}
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, groups3, groups4, groups5, orders0, base.TopicPartition{Topic: "__consumer_offsets", Partition: 6})})
	w.waitDone(t, "t1")
	w.wantCalls(t,
		"marker __consumer_offsets-3 pid=7 epoch=2 commit=true coordinator=1", // refused: retried
		"marker __consumer_offsets-3 pid=7 epoch=2 commit=true coordinator=1",
		"durable __consumer_offsets-3: <nil>",
		"marker __consumer_offsets-4 pid=7 epoch=2 commit=true coordinator=1", // fenced there: skipped
		"group 5 pid=7 epoch=2 commit=true coordinator=1",                     // led here now
		"marker orders-0 pid=7 epoch=2 commit=true coordinator=1",
		"durable orders-0: <nil>",
		"group 6 pid=7 epoch=2 commit=true coordinator=1",
		"written t1 epoch=2",
	)
}
