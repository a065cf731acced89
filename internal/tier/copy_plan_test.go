package tier

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func taskRanges(tasks []CopyTask) []base.Range {
	var out []base.Range
	for _, t := range tasks {
		out = append(out, t.Range)
	}
	return out
}

// TestCopyNeverSkipsASegment: once a segment cannot go (not rolled, above
// the LSO, inside the copy lag, or after a hole), nothing after it goes.
func TestCopyNeverSkipsASegment(t *testing.T) {
	young := lseg(20, 30, 10)
	young.MaxTimestampMs = 95 // the others' newest records are stamped with their end offset
	local := []LocalSegment{lseg(0, 10, 10), lseg(10, 20, 10), young, lseg(30, 40, 10), active(40, 45, 5)}
	lag := CopyConfig{Lag: CopyLag{Ms: 50}}
	got := PlanCopies(local, mustView(rseg(1, 0, 10, 10, remotemeta.CopyFinished)), epoch0, 45, lag, 100)
	if want := []base.Range{rng(10, 20)}; !slices.Equal(taskRanges(got), want) {
		t.Fatalf("tasks %v, want %v: [30, 40) is old enough but follows a young segment", taskRanges(got), want)
	}

	holed := []LocalSegment{lseg(0, 10, 10), lseg(12, 20, 10), active(20, 25, 1)}
	if got := PlanCopies(holed, mustView(), epoch0, 25, CopyConfig{}, 0); !slices.Equal(taskRanges(got), []base.Range{rng(0, 10)}) {
		t.Errorf("across a hole: %v", taskRanges(got))
	}
	// A failed earlier copy (DANGLING) does not count as tiered: it is copied again.
	v := mustView(rseg(1, 0, 10, 10, remotemeta.CopyFinished), rseg(2, 10, 20, 10, remotemeta.Dangling))
	if got := PlanCopies(local, v, epoch0, 20, CopyConfig{}, 0); !slices.Equal(taskRanges(got), []base.Range{rng(10, 20)}) {
		t.Errorf("after a dangling attempt: %v", taskRanges(got))
	}
}

func TestCopyOnlyBelowLastStableOffset(t *testing.T) {
	local := []LocalSegment{lseg(0, 10, 1), lseg(10, 20, 1), lseg(20, 30, 1), active(30, 35, 1)}
	for _, tc := range []struct {
		lso  base.Offset
		want []base.Range
	}{
		{0, nil},
		{9, nil},
		{10, []base.Range{rng(0, 10)}},
		{19, []base.Range{rng(0, 10)}},
		{30, []base.Range{rng(0, 10), rng(10, 20), rng(20, 30)}},
		{35, []base.Range{rng(0, 10), rng(10, 20), rng(20, 30)}}, // never the active segment
	} {
		if got := taskRanges(PlanCopies(local, mustView(), epoch0, tc.lso, CopyConfig{}, 0)); !slices.Equal(got, tc.want) {
			t.Errorf("lso %d: tasks %v, want %v", tc.lso, got, tc.want)
		}
	}
}

func TestPlanCopies(t *testing.T) {
	local := []LocalSegment{lseg(0, 10, 100), lseg(10, 20, 100), lseg(20, 30, 100), active(30, 35, 50)}
	tiered10 := mustView(rseg(1, 0, 10, 100, remotemeta.CopyFinished))
	for _, tc := range []struct {
		name  string
		local []LocalSegment
		v     PartitionView
		cfg   CopyConfig
		nowMs int64
		want  []base.Range
	}{
		{"metadata not loaded", local, PartitionView{}, CopyConfig{}, 0, nil},
		{"copy disabled", local, mustView(), CopyConfig{CopyDisabled: true}, 0, nil},
		{"from tieredNext", local, tiered10, CopyConfig{}, 0, []base.Range{rng(10, 20), rng(20, 30)}},
		{"all tiered", local, mustView(rseg(1, 0, 30, 1, remotemeta.CopyFinished)), CopyConfig{}, 0, nil},
		{"straddles tieredNext", local, mustView(rseg(1, 0, 15, 1, remotemeta.CopyFinished)), CopyConfig{}, 0, []base.Range{rng(15, 20), rng(20, 30)}},
		{"local starts past the tier", local[2:], tiered10, CopyConfig{}, 0, []base.Range{rng(20, 30)}},
		{"no local segment", nil, tiered10, CopyConfig{}, 0, nil},
		// Lag by bytes: after [0, 10) come 250 bytes, after [10, 20) 150,
		// after [20, 30) only the active segment's 50.
		{"lag bytes", local, mustView(), CopyConfig{Lag: CopyLag{Bytes: 150}}, 0, []base.Range{rng(0, 10), rng(10, 20)}},
		{"lag bytes not reached", local, mustView(), CopyConfig{Lag: CopyLag{Bytes: 350}}, 0, nil},
		{"lag ms", local, mustView(), CopyConfig{Lag: CopyLag{Ms: 15}}, 30, []base.Range{rng(0, 10)}},
		{"lag ms or bytes", local, mustView(), CopyConfig{Lag: CopyLag{Ms: 15, Bytes: 150}}, 30, []base.Range{rng(0, 10), rng(10, 20)}},
	} {
		if got := taskRanges(PlanCopies(tc.local, tc.v, epoch0, 100, tc.cfg, tc.nowMs)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: tasks %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCopyTaskCarriesLineage(t *testing.T) {
	local := []LocalSegment{lseg(0, 10, 1), lseg(10, 20, 1), active(20, 20, 0)}
	lineage := []base.EpochStart{es(3, 0), es(5, 4), es(6, 10), es(8, 15)}
	tasks := PlanCopies(local, mustView(rseg(1, 0, 6, 1, remotemeta.CopyFinished, es(3, 0), es(5, 4))), lineage, 20, CopyConfig{}, 0)
	if len(tasks) != 2 || !tasks[0].Partial() || tasks[1].Partial() {
		t.Fatalf("tasks %+v", tasks)
	}
	if want := []base.EpochStart{es(5, 6)}; !slices.Equal(tasks[0].LeaderEpochs, want) {
		t.Errorf("epochs of %v = %v, want %v", tasks[0].Range, tasks[0].LeaderEpochs, want)
	}
	if want := []base.EpochStart{es(6, 10), es(8, 15)}; !slices.Equal(tasks[1].LeaderEpochs, want) {
		t.Errorf("epochs of %v = %v, want %v", tasks[1].Range, tasks[1].LeaderEpochs, want)
	}
	s := tasks[1].Started(sid(9), base.TopicID{1}, testTP)
	if err := s.Validate(); err != nil || s.State != remotemeta.CopyStarted || s.Range != rng(10, 20) {
		t.Errorf("Started = %+v, %v", s, err)
	}
	// The lineage cannot name the writer of offsets below its first entry.
	if got := PlanCopies(local, mustView(), []base.EpochStart{es(3, 5)}, 20, CopyConfig{}, 0); got != nil {
		t.Errorf("below the lineage: %v", taskRanges(got))
	}
}

// TestPlanCopiesRefusesALocalLogItCannotBe: each impossible local segment
// list is a caller's bug, and panics.
func TestPlanCopiesRefusesALocalLogItCannotBe(t *testing.T) {
	for name, local := range map[string][]LocalSegment{
		"negative base":         {lseg(-1, 10, 10)},
		"next below base":       {lseg(10, 9, 10)},
		"negative size":         {lseg(0, 10, -1)},
		"active before the end": {active(0, 10, 10), lseg(10, 20, 10)},
		"overlap":               {lseg(0, 10, 10), lseg(9, 20, 10)},
	} {
		mustPanic(t, "PlanCopies, "+name, func() { PlanCopies(local, mustView(), epoch0, 100, CopyConfig{}, 0) })
	}
	// The edges are no bug: an empty segment, one right after another.
	PlanCopies([]LocalSegment{lseg(0, 0, 0), lseg(0, 10, 0), active(10, 10, 0)}, mustView(), epoch0, 100, CopyConfig{}, 0)
}
