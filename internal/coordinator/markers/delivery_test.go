package markers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
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

// heldWorld returns a world whose MarkersWritten the test answers.
func heldWorld() *world {
	w := newWorld()
	w.held = make(chan submitted, 10)
	return w
}

// TestMarkerIsDurableBeforeTheTransactionCompletes: MarkersWritten goes
// to the coordinator only once every marker is durable, with the
// coordinator epoch of the effect on every path (a partition refuses a
// marker of a replaced coordinator by it); a marker whose durability wait
// fails is written again.
func TestMarkerIsDurableBeforeTheTransactionCompletes(t *testing.T) {
	w := heldWorld()
	w.failures["durable orders-0"] = []error{errors.New("fsync failed")}
	wr := w.writer(t)
	wm := effect("t1", true, orders0, groups3)
	wm.CoordinatorEpoch = 9
	wr.OnEffects(5, []any{wm})
	w.nextHeld(t).done(nil)
	w.wantCalls(t,
		"marker orders-0 pid=7 epoch=2 commit=true coordinator=9",
		"durable orders-0: fsync failed",
		"marker orders-0 pid=7 epoch=2 commit=true coordinator=9",
		"durable orders-0: <nil>",
		"group 3 pid=7 epoch=2 commit=true coordinator=9",
		"written t1 epoch=2",
	)
}

// TestNotCoordinatorEndsTheWriteAndTheNextEffectFollows: once the
// transaction coordinator has moved (NOT_COORDINATOR), MarkersWritten is
// not retried (whoever loads the partition emits the effect again), and
// an effect queued behind the write goes next.
func TestNotCoordinatorEndsTheWriteAndTheNextEffectFollows(t *testing.T) {
	w := heldWorld()
	wr := w.writer(t)
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	first := w.nextHeld(t)
	queued := effect("t1", false, orders0)
	queued.ProducerEpoch = 3
	wr.OnEffects(5, []any{queued}) // the flight waits in first's submit: queued behind it
	first.done(&runtime.CodeError{Code: kerr.NotCoordinator.Code})
	second := w.nextHeld(t)
	if second.ev.ProducerEpoch != 3 {
		t.Fatalf("after NOT_COORDINATOR the Writer submitted %+v, want the queued effect's (epoch 3); calls %q", second.ev, w.log())
	}
	second.done(nil)
	w.wantCalls(t, firstThenQueued...)
}

// TestEffectsAfterCloseWriteNothing: a closed Writer writes no marker (the
// next load of the coordinator emits its effects again).
func TestEffectsAfterCloseWriteNothing(t *testing.T) {
	w := heldWorld()
	wr := w.writer(t)
	wr.Close()
	wr.OnEffects(5, []any{effect("t1", true, orders0)})
	wr.Close() // waits for anything OnEffects might have started
	if got := w.log(); len(got) != 0 {
		t.Fatalf("a closed Writer made calls %q", got)
	}
}
