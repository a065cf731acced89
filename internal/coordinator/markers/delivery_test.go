package markers

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/coordinator/txn"
	"github.com/strata-broker/strata/internal/partition/producers"
)

// What a marker's write may end with, and whether the marker is then
// skipped (settled elsewhere or not needed) rather than retried.
func TestSkippableErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		skip bool
	}{
		{"written", nil, false},
		{"partition gone", fmt.Errorf("lookup: %w", ErrPartitionGone), true},
		{"stale group marker", fmt.Errorf("group: %w", group.ErrStaleMarker), true},
		{"newer producer epoch", fmt.Errorf("broker 2: %w", producers.ErrInvalidProducerEpoch), true},
		{"newer coordinator epoch", fmt.Errorf("broker 2: %w", producers.ErrTransactionCoordinatorFenced), true},
		{"topic deleted (group runtime)", &runtime.CodeError{Code: kerr.UnknownTopicOrPartition.Code}, true},
		{"coordinator loading", &runtime.CodeError{Code: kerr.CoordinatorLoadInProgress.Code}, false},
		{"not the leader", &runtime.CodeError{Code: kerr.NotLeaderForPartition.Code}, false},
		{"disk", errors.New("fsync failed"), false},
	} {
		if skip, _ := skippable(tc.err); skip != tc.skip {
			t.Errorf("%s: skippable = %v, want %v", tc.name, skip, tc.skip)
		}
	}
}

// recorder is a data partition and a group runtime that log, with the
// coordinator epoch, every marker and every durability wait.
type recorder struct {
	mu       sync.Mutex
	calls    []string
	waitErrs []error // the answers of the next waits
}

func (r *recorder) log(call string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
}

func (r *recorder) logged() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

type recordingAppender struct {
	r  *recorder
	tp base.TopicPartition
}

func (a recordingAppender) AppendMarker(pid base.ProducerID, epoch int16, commit bool, coordinatorEpoch int32) (base.Offset, func() error, error) {
	a.r.log(fmt.Sprintf("marker %v pid=%d epoch=%d coordinator=%d", a.tp, pid, epoch, coordinatorEpoch))
	return 0, func() error {
		a.r.mu.Lock()
		defer a.r.mu.Unlock()
		var err error
		if len(a.r.waitErrs) > 0 {
			err, a.r.waitErrs = a.r.waitErrs[0], a.r.waitErrs[1:]
		}
		a.r.calls = append(a.r.calls, fmt.Sprintf("durable %v: %v", a.tp, err))
		return err
	}, nil
}

// submitted is a MarkersWritten the Writer handed to the transaction
// runtime; the test answers it.
type submitted struct {
	ev   txn.MarkersWritten
	done func(error)
}

// recordingWriter returns a Writer over r whose MarkersWritten go to the
// returned channel, to be answered by the test.
func recordingWriter(t *testing.T, r *recorder) (*Writer, chan submitted) {
	t.Helper()
	subs := make(chan submitted, 10)
	wr, err := New(Options{
		Partition: func(tp base.TopicPartition) (MarkerAppender, error) {
			return recordingAppender{r, tp}, nil
		},
		GroupsTopic: "__consumer_offsets",
		SubmitGroupEvent: func(p int32, ev any, done func(error)) {
			e := ev.(group.TxnCompleted)
			r.log(fmt.Sprintf("group %d pid=%d epoch=%d coordinator=%d", p, e.ProducerID, e.ProducerEpoch, e.CoordinatorEpoch))
			done(nil)
		},
		SubmitTxnEvent: func(p int32, ev any, done func(error)) {
			e := ev.(txn.MarkersWritten)
			r.log(fmt.Sprintf("written %s epoch=%d", e.TransactionalID, e.ProducerEpoch))
			subs <- submitted{e, done}
		},
		RetryBackoff: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wr.Close)
	return wr, subs
}

// next returns the next MarkersWritten the Writer submits (failing after a
// generous watchdog rather than hanging).
func next(t *testing.T, subs chan submitted, r *recorder) submitted {
	t.Helper()
	select {
	case s := <-subs:
		return s
	case <-time.After(time.Minute):
		t.Fatalf("no MarkersWritten submitted; calls %q", r.logged())
	}
	return submitted{}
}

// TestMarkerIsDurableBeforeTheTransactionCompletes: MarkersWritten goes
// to the coordinator only once every marker is durable, with the
// coordinator epoch of the effect on every path (a partition refuses a
// marker of a replaced coordinator by it); a marker whose durability wait
// fails is written again.
func TestMarkerIsDurableBeforeTheTransactionCompletes(t *testing.T) {
	r := &recorder{waitErrs: []error{errors.New("fsync failed")}}
	wr, subs := recordingWriter(t, r)
	wm := effect("t1", true, orders0, groups3)
	wm.CoordinatorEpoch = 9
	wr.OnEffects(5, []any{wm})
	next(t, subs, r).done(nil)
	want := []string{
		"marker orders-0 pid=7 epoch=2 coordinator=9",
		"durable orders-0: fsync failed",
		"marker orders-0 pid=7 epoch=2 coordinator=9",
		"durable orders-0: <nil>",
		"group 3 pid=7 epoch=2 coordinator=9",
		"written t1 epoch=2",
	}
	if got := r.logged(); !slices.Equal(got, want) {
		t.Fatalf("calls\n%q\nwant\n%q", got, want)
	}
}

// TestNotCoordinatorEndsTheWriteAndTheNextEffectFollows: once the
// transaction coordinator has moved (NOT_COORDINATOR), MarkersWritten is
// not retried (whoever loads the partition emits the effect again), and
// an effect queued behind the write goes next.
func TestNotCoordinatorEndsTheWriteAndTheNextEffectFollows(t *testing.T) {
	r := &recorder{}
	wr, subs := recordingWriter(t, r)
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	first := next(t, subs, r)
	queued := effect("t1", false, orders0)
	queued.ProducerEpoch = 3
	wr.OnEffects(5, []any{queued}) // the flight waits in first's submit: queued behind it
	first.done(&runtime.CodeError{Code: kerr.NotCoordinator.Code})
	second := next(t, subs, r)
	if second.ev.ProducerEpoch != 3 {
		t.Fatalf("after NOT_COORDINATOR the Writer submitted %+v, want the queued effect's (epoch 3); calls %q", second.ev, r.logged())
	}
	second.done(nil)
	want := []string{
		"marker orders-0 pid=7 epoch=2 coordinator=1",
		"durable orders-0: <nil>",
		"written t1 epoch=2",
		"marker orders-0 pid=7 epoch=3 coordinator=1",
		"durable orders-0: <nil>",
		"written t1 epoch=3",
	}
	if got := r.logged(); !slices.Equal(got, want) {
		t.Fatalf("calls\n%q\nwant\n%q", got, want)
	}
}

// TestEffectsAfterCloseWriteNothing: a closed Writer writes no marker (the
// next load of the coordinator emits its effects again).
func TestEffectsAfterCloseWriteNothing(t *testing.T) {
	r := &recorder{}
	wr, _ := recordingWriter(t, r)
	wr.Close()
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	wr.Close() // waits for anything OnEffects might have started
	if got := r.logged(); len(got) != 0 {
		t.Fatalf("a closed Writer made calls %q", got)
	}
}
