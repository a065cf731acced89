package tier

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

type planned struct {
	id     remotemeta.SegmentID
	reason DeleteReason
}

func summary(tasks []DeleteTask) []planned {
	var out []planned
	for _, t := range tasks {
		out = append(out, planned{t.Segment.ID, t.Reason})
	}
	return out
}

func TestPlanDeletes(t *testing.T) {
	v := mustView(
		rseg(1, 0, 10, 1, remotemeta.CopyFinished),
		rseg(2, 0, 10, 1, remotemeta.Dangling),
		rseg(3, 10, 20, 1, remotemeta.CopyFinished),
		rseg(4, 20, 30, 1, remotemeta.CopyStarted),
		rseg(5, 20, 30, 1, remotemeta.DeleteStarted),
		rseg(6, 20, 30, 1, remotemeta.DeleteFinished),
	)
	d := retention.Decision{NewLogStart: 10, DeleteRemote: []base.Range{rng(0, 10)}}
	want := []planned{{sid(1), DeleteRetention}, {sid(2), DeleteDangling}, {sid(4), DeleteAbandonedCopy}, {sid(5), DeleteUnfinished}}
	if got := summary(PlanDeletes(v, d)); !slices.Equal(got, want) {
		t.Errorf("PlanDeletes = %v, want %v", got, want)
	}
	if got := PlanDeletes(PartitionView{}, d); got != nil {
		t.Errorf("a view that is not loaded plans %v", got)
	}
	for name, bad := range map[string]retention.Decision{
		"unknown range":         {NewLogStart: 20, DeleteRemote: []base.Range{rng(0, 20)}},
		"at or above log start": {NewLogStart: 5, DeleteRemote: []base.Range{rng(0, 10)}},
	} {
		mustPanic(t, "PlanDeletes, "+name, func() { PlanDeletes(v, bad) })
	}
}

func TestDeleteTaskSteps(t *testing.T) {
	for st, want := range map[remotemeta.State][]remotemeta.State{
		remotemeta.CopyStarted:   {remotemeta.Dangling, remotemeta.DeleteStarted},
		remotemeta.CopyFinished:  {remotemeta.DeleteStarted},
		remotemeta.Dangling:      {remotemeta.DeleteStarted},
		remotemeta.DeleteStarted: nil,
	} {
		s := rseg(1, 0, 1, 1, st)
		steps := DeleteTask{Segment: s}.Steps()
		if !slices.Equal(steps, want) {
			t.Errorf("%v: steps %v, want %v", st, steps, want)
		}
		// Every step, then DELETE_FINISHED or DANGLING, is a valid path.
		for _, to := range steps {
			var err error
			if s, err = s.Transition(to); err != nil {
				t.Fatal(err)
			}
		}
		for _, end := range []remotemeta.State{remotemeta.DeleteFinished, remotemeta.Dangling} {
			if _, err := s.Transition(end); err != nil {
				t.Errorf("%v: after the steps: %v", st, err)
			}
		}
	}
}

func TestPlanStrays(t *testing.T) {
	lineage := []base.EpochStart{es(1, 10), es(3, 20)}
	v := mustView(
		rseg(1, 0, 10, 1, remotemeta.CopyFinished),                        // older than the epoch cache
		rseg(2, 10, 20, 1, remotemeta.CopyFinished, es(1, 10)),            // in the lineage
		rseg(3, 10, 20, 1, remotemeta.CopyFinished, es(1, 10), es(2, 15)), // diverged, below log start
		rseg(4, 20, 30, 1, remotemeta.CopyFinished, es(2, 20)),            // diverged, above log start
		rseg(5, 0, 10, 1, remotemeta.Dangling),
	)
	want := []planned{{sid(1), DeleteStray}, {sid(3), DeleteStray}}
	if got := summary(PlanStrays(v, lineage, 20)); !slices.Equal(got, want) {
		t.Errorf("PlanStrays = %v, want %v", got, want)
	}
	if got := PlanStrays(v, nil, 20); got != nil {
		t.Errorf("no lineage: %v", got)
	}
}

func TestPlanDisable(t *testing.T) {
	v := mustView(rseg(1, 0, 10, 1, remotemeta.CopyFinished), rseg(2, 10, 20, 1, remotemeta.Dangling), rseg(3, 20, 30, 1, remotemeta.DeleteFinished))
	for _, tc := range []struct {
		name               string
		copyOff, deleteToo bool
		v                  PartitionView
		copy, move         bool
		deletes            []planned
	}{
		{"on", false, false, v, true, false, nil},
		{"copy disabled", true, false, v, false, false, nil},
		{"delete.on.disable without disabling", false, true, v, true, false, nil},
		{"off, delete on disable", true, true, v, false, true, []planned{{sid(1), DeleteOnDisable}, {sid(2), DeleteOnDisable}}},
		{"off, view not loaded", true, true, PartitionView{}, false, false, nil},
	} {
		p := PlanDisable(tc.v, tc.copyOff, tc.deleteToo)
		if p.Copy != tc.copy || p.MoveLogStartToLocal != tc.move || !slices.Equal(summary(p.Delete), tc.deletes) {
			t.Errorf("%s: %+v", tc.name, p)
		}
	}
}
