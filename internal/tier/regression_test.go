package tier

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Reference 000 (fresh-leader double count): the tier of a partition whose
// metadata is not loaded is unknown, not "nothing tiered" and not -1, and
// no answer that depends on it is given.
func TestTieredNextUnknownWhenMetadataNotLoaded(t *testing.T) {
	var v PartitionView
	if got := v.TieredNext(epoch0); got != retention.TieredUnknown() {
		t.Fatalf("TieredNext of an unloaded view = %+v, want unknown", got)
	}
	if tr, remote := v.RetentionTier(epoch0, 100); tr.Known || remote != nil {
		t.Errorf("RetentionTier = %+v, %v", tr, remote)
	}
	if _, ok := v.LastTiered(epoch0); ok {
		t.Error("LastTiered answered")
	}
	if _, ok := v.EarliestPendingUpload(epoch0, 0); ok {
		t.Error("EarliestPendingUpload answered")
	}
	local := []LocalSegment{lseg(0, 100, 1000), active(100, 120, 10)}
	if got := PlanCopies(local, v, epoch0, 120, CopyConfig{}, 0); got != nil {
		t.Errorf("PlanCopies with the tier unknown: %v", taskRanges(got))
	}
	if got := PlanDeletes(v, retention.Decision{}); got != nil {
		t.Errorf("PlanDeletes with the tier unknown: %v", got)
	}
}

// Reference 000: a topic at its retention.bytes cap, local.retention unset
// (-2, resolved to the total), every rolled segment tiered and still held
// locally. A fresh leader runs the pass before and after its metadata is
// loaded: neither deletes anything or moves the log start.
func TestFreshLeaderSizeRetentionDeletesNothingAtCap(t *testing.T) {
	loaded := mustView(rseg(1, 0, 100, 1000, remotemeta.CopyFinished), rseg(2, 100, 200, 1000, remotemeta.CopyFinished))
	local := []retention.Segment{
		{Range: rng(0, 100), SizeBytes: 1000}, {Range: rng(100, 200), SizeBytes: 1000}, {Range: rng(200, 250), SizeBytes: 200},
	}
	const capBytes = 2200 // the unique size: remote 2000 + untiered local 200
	policy := retention.Policy{RetentionBytes: retention.LimitOf(capBytes), LocalRetentionBytes: retention.LimitOf(capBytes)}
	for name, tc := range map[string]struct {
		v       PartitionView
		lineage []base.EpochStart
	}{
		"metadata not loaded":    {PartitionView{}, epoch0},
		"epoch cache not loaded": {loaded, nil},
		"metadata loaded":        {loaded, epoch0},
	} {
		t.Run(name, func(t *testing.T) {
			v := tc.v
			tiered, remote := v.RetentionTier(tc.lineage, 250)
			s := retention.Snapshot{HighWatermark: 250, Local: local, Remote: remote, Tiered: tiered}
			d := retention.Plan(s, policy, 1000)
			if d.NewLogStart != 0 || len(d.DeleteRemote) != 0 || len(d.LocalDeletions(local)) != 0 {
				t.Fatalf("at the cap the plan deletes: %+v", d)
			}
			if tasks := PlanDeletes(v, d); len(tasks) != 0 {
				t.Fatalf("PlanDeletes = %v", summary(tasks))
			}
		})
	}
}

// Reference 001 (KAFKA-17212): a one-record segment at the tiered boundary
// is counted once. The view's exclusive tieredNext (101, not the last
// tiered offset 100) is what retention compares base offsets with.
func TestSingleRecordSegmentCountedOnce(t *testing.T) {
	v := mustView(rseg(1, 0, 100, 1000, remotemeta.CopyFinished), rseg(2, 100, 101, 500, remotemeta.CopyFinished))
	tiered, remote := v.RetentionTier(epoch0, 150)
	if tiered != retention.TieredUpTo(101) {
		t.Fatalf("tiered = %+v, want up to 101", tiered)
	}
	local := []retention.Segment{{Range: rng(100, 101), SizeBytes: 500}, {Range: rng(101, 150), SizeBytes: 300}}
	s := retention.Snapshot{HighWatermark: 150, Local: local, Remote: remote, Tiered: tiered}
	if got, _ := retention.CountedBytes(s); got != 1800 {
		t.Fatalf("counted %d bytes, want 1800 (the one-record segment once)", got)
	}
	d := retention.Plan(s, retention.Policy{RetentionBytes: retention.LimitOf(800)}, 0)
	tasks := PlanDeletes(v, d)
	if d.NewLogStart != 100 || len(tasks) != 1 || tasks[0].Segment.ID != sid(1) {
		t.Fatalf("at 800 bytes: log start %d, deletes %v; want 100 and only [0, 100)", d.NewLogStart, summary(tasks))
	}
}

// Reference 002 (KIP-1066): a copy fails, and so does the delete of what it
// left; the segment is DANGLING and is planned again on every later pass
// until a delete succeeds and it is DELETE_FINISHED.
func TestDanglingSegmentIsRetriedEveryPassUntilDeleted(t *testing.T) {
	local := []LocalSegment{lseg(0, 10, 100), active(10, 12, 5)}
	v := mustView()
	task := PlanCopies(local, v, epoch0, 12, CopyConfig{}, 0)[0]
	started := task.Started(sid(1), base.TopicID{}, testTP)
	v = apply(t, v, started)
	failed, _ := started.Transition(remotemeta.Dangling) // the upload failed
	v = apply(t, v, failed)

	const failingPasses = 5
	for pass := 0; ; pass++ {
		tasks := PlanDeletes(v, retention.Decision{})
		var mine *DeleteTask
		for i := range tasks {
			if tasks[i].Segment.ID == sid(1) {
				mine = &tasks[i]
			}
		}
		if mine == nil {
			t.Fatalf("pass %d: the DANGLING segment is not planned for deletion (%v)", pass, summary(tasks))
		}
		if mine.Reason != DeleteDangling {
			t.Fatalf("pass %d: reason %v", pass, mine.Reason)
		}
		s := mine.Segment
		for _, st := range mine.Steps() {
			s, _ = s.Transition(st)
			v = apply(t, v, s)
		}
		if pass < failingPasses {
			s, _ = s.Transition(remotemeta.Dangling) // the bucket refused the delete
			v = apply(t, v, s)
			continue
		}
		s, _ = s.Transition(remotemeta.DeleteFinished)
		v = apply(t, v, s)
		break
	}
	if got, _ := v.Segment(sid(1)); got.State != remotemeta.DeleteFinished {
		t.Fatalf("final state %v", got.State)
	}
	if tasks := PlanDeletes(v, retention.Decision{}); len(tasks) != 0 {
		t.Errorf("DELETE_FINISHED is planned again: %v", summary(tasks))
	}
	// Meanwhile the copy was retried with a fresh id and is unaffected.
	if tasks := PlanCopies(local, v, epoch0, 12, CopyConfig{}, 0); len(tasks) != 1 || tasks[0].Range != rng(0, 10) {
		t.Errorf("copy retry: %v", taskRanges(tasks))
	}
}

// KIP-950: remote.log.copy.disable stops uploads, keeps the tier readable,
// and deletes nothing that retention keeps; only delete.on.disable with
// tiering turned off deletes the tier.
func TestCopyDisabledNeverDeletes(t *testing.T) {
	v := mustView(rseg(1, 0, 100, 1000, remotemeta.CopyFinished), rseg(2, 100, 200, 1000, remotemeta.CopyFinished))
	local := []LocalSegment{lseg(100, 200, 1000), lseg(200, 300, 1000), active(300, 310, 10)}
	cfg := CopyConfig{CopyDisabled: true}
	if got := PlanCopies(local, v, epoch0, 310, cfg, 0); got != nil {
		t.Fatalf("uploads with copying disabled: %v", taskRanges(got))
	}
	if p := PlanDisable(v, true, false); p.Copy || len(p.Delete) != 0 || p.MoveLogStartToLocal {
		t.Fatalf("PlanDisable(copy disabled) = %+v", p)
	}
	// Retention still runs on the tier, and deletes nothing in retention.
	tiered, remote := v.RetentionTier(epoch0, 310)
	snap := retention.Snapshot{HighWatermark: 310, Remote: remote, Tiered: tiered, Local: []retention.Segment{
		{Range: rng(100, 200), SizeBytes: 1000}, {Range: rng(200, 300), SizeBytes: 1000}, {Range: rng(300, 310), SizeBytes: 10},
	}}
	d := retention.Plan(snap, retention.Policy{RetentionBytes: retention.LimitOf(3010)}, 0)
	if tasks := PlanDeletes(v, d); len(tasks) != 0 || d.NewLogStart != 0 {
		t.Fatalf("in retention, deletes %v, log start %d", summary(tasks), d.NewLogStart)
	}
	// Local retention may drop the tiered local copy, never the untiered one.
	d = retention.Plan(snap, retention.Policy{LocalRetentionBytes: retention.LimitOf(0)}, 0)
	if d.DeleteLocalBefore > 200 {
		t.Fatalf("local retention deletes untiered data below %d", d.DeleteLocalBefore)
	}
	if p := PlanDisable(v, true, true); len(p.Delete) != 2 || !p.MoveLogStartToLocal {
		t.Fatalf("PlanDisable(delete on disable) = %+v", p)
	}
}

func apply(t *testing.T, v PartitionView, s remotemeta.RemoteSegment) PartitionView {
	t.Helper()
	out, err := v.Apply(s)
	if err != nil {
		t.Fatalf("Apply(%v %v): %v", s.ID, s.State, err)
	}
	return out
}
