package tier

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

const bytesPerOffset = 10

// world is a model partition with a remote tier: the local log, the
// quorum's view, and the bucket (which copy attempts have objects in it).
// Its executor follows the contract of the planners and fails at random.
type world struct {
	t        *rapid.T
	fail     bool // inject failures this pass
	local    []LocalSegment
	lineage  []remotemeta.EpochStart
	view     PartitionView
	objects  map[remotemeta.SegmentID]bool
	logStart base.Offset
	hw, lso  base.Offset
	nowMs    int64
	nextID   int
	// tieredNext after the previous pass, for the monotonicity check.
	prevTiered retention.Tiered
}

func (w *world) logEnd() base.Offset { return w.local[len(w.local)-1].NextOffset }

func (w *world) failed(label string) bool {
	return w.fail && rapid.IntRange(0, 3).Draw(w.t, label) == 0
}

// write applies one metadata record; a failed write leaves the quorum as it was.
func (w *world) write(s remotemeta.RemoteSegment, label string) bool {
	if w.failed(label) {
		return false
	}
	v, err := w.view.Apply(s)
	if err != nil {
		w.t.Fatalf("executor wrote an invalid record %v %v: %v", s.ID, s.State, err)
	}
	w.view = v
	return true
}

func (w *world) produce(n base.Offset) {
	a := &w.local[len(w.local)-1]
	a.NextOffset += n
	a.SizeBytes += int64(n) * bytesPerOffset
	a.MaxTimestampMs, a.LastModifiedMs = w.nowMs, w.nowMs
}

func (w *world) roll() {
	a := &w.local[len(w.local)-1]
	if a.NextOffset == a.BaseOffset {
		return
	}
	a.Active = false
	w.local = append(w.local, LocalSegment{BaseOffset: a.NextOffset, NextOffset: a.NextOffset, Active: true, LastModifiedMs: w.nowMs})
}

// newLeader bumps the epoch and may re-split the rolled local segments at
// other boundaries, as a replica that rolled on its own schedule would.
func (w *world) newLeader() {
	last := w.lineage[len(w.lineage)-1]
	next := remotemeta.EpochStart{Epoch: last.Epoch + 1, Start: w.logEnd()}
	if next.Start == last.Start {
		w.lineage = append(w.lineage[:len(w.lineage)-1:len(w.lineage)-1], next)
	} else {
		w.lineage = append(w.lineage[:len(w.lineage):len(w.lineage)], next)
	}
	rolled := w.local[:len(w.local)-1]
	if len(rolled) == 0 || !rapid.Bool().Draw(w.t, "resplit") {
		return
	}
	var split []LocalSegment
	for o, end := rolled[0].BaseOffset, rolled[len(rolled)-1].NextOffset; o < end; {
		n := min(base.Offset(rapid.IntRange(1, 6).Draw(w.t, "splitLen")), end-o)
		split = append(split, LocalSegment{BaseOffset: o, NextOffset: o + n, SizeBytes: int64(n) * bytesPerOffset,
			MaxTimestampMs: w.nowMs, LastModifiedMs: w.nowMs})
		o += n
	}
	w.local = append(split, w.local[len(w.local)-1])
}

func (w *world) pass(loaded bool) {
	w.hw = base.Offset(rapid.Int64Range(int64(w.hw), int64(w.logEnd())).Draw(w.t, "hw"))
	w.lso = base.Offset(rapid.Int64Range(int64(w.lso), int64(w.hw)).Draw(w.t, "lso"))
	seen := w.view
	if !loaded {
		seen = PartitionView{} // a fresh leader that has not read the quorum
	}
	w.copyStep(seen)
	if loaded {
		seen = w.view
	}
	w.retentionStep(seen)
	w.checkInvariants()
}

func (w *world) copyStep(seen PartitionView) {
	cfg := CopyConfig{CopyDisabled: rapid.IntRange(0, 5).Draw(w.t, "copyDisabled") == 0}
	if rapid.Bool().Draw(w.t, "lagSet") {
		cfg.CopyLagBytes = retention.LimitOf(rapid.Int64Range(0, 200).Draw(w.t, "lagBytes"))
	}
	tasks := PlanCopies(w.local, seen, w.lineage, w.lso, cfg, w.nowMs)
	tiered := seen.TieredNext(w.lineage)
	for i, task := range tasks {
		if task.Segment.Active || task.Range.End > w.lso {
			w.t.Fatalf("copies %v: active or above the LSO %d", task.Range, w.lso)
		}
		if i > 0 && task.Range.Start != tasks[i-1].Range.End || i == 0 && tiered.Any && task.Range.Start < tiered.Next {
			w.t.Fatalf("copies %v after %v / tieredNext %+v: not contiguous", task.Range, tasks[max(i-1, 0)].Range, tiered)
		}
		w.nextID++
		rec := task.Started(sid(w.nextID), base.TopicID{}, testTP)
		rec.SizeBytes = task.Range.Len() * bytesPerOffset
		if !w.write(rec, "writeStarted") {
			return
		}
		if w.failed("upload") {
			w.objects[rec.ID] = rapid.Bool().Draw(w.t, "partialUpload")
			rec, _ = rec.Transition(remotemeta.Dangling)
			w.write(rec, "writeDangling")
			return
		}
		w.objects[rec.ID] = true
		rec, _ = rec.Transition(remotemeta.CopyFinished)
		if !w.write(rec, "writeFinished") {
			return
		}
	}
}

func (w *world) retentionStep(seen PartitionView) {
	local := make([]retention.Segment, len(w.local))
	for i, s := range w.local {
		local[i] = retention.Segment{Range: s.Range(), SizeBytes: s.SizeBytes, MaxTimestampMs: s.MaxTimestampMs}
	}
	tiered, remote := seen.RetentionTier(w.lineage, w.hw)
	snap := retention.Snapshot{LogStart: w.logStart, HighWatermark: w.hw, Local: local, Remote: remote, Tiered: tiered}
	lim := func(label string, hi int64) retention.Limit {
		if rapid.Bool().Draw(w.t, label+"Set") {
			return retention.LimitOf(rapid.Int64Range(0, hi).Draw(w.t, label))
		}
		return retention.Limit{}
	}
	policy := retention.Policy{
		RetentionBytes: lim("retentionBytes", 800), RetentionMs: lim("retentionMs", 300),
		LocalRetentionBytes: lim("localBytes", 400), LocalRetentionMs: lim("localMs", 300),
	}
	d := retention.Plan(snap, policy, w.nowMs)

	// Apply: the log start and the local deletions, then the remote tasks.
	w.logStart = d.NewLogStart
	w.local = w.local[len(d.LocalDeletions(local)):]
	tasks := PlanDeletes(seen, d)
	tasks = append(tasks, PlanStrays(seen, w.lineage, w.logStart)...)
	retentionFailed := false
	for i, task := range tasks {
		s := task.Segment
		if s.State == remotemeta.CopyFinished && s.Range.End > d.NewLogStart {
			w.t.Fatalf("(c) deletes %v %v at or above NewLogStart %d", s.ID, s.Range, d.NewLogStart)
		}
		if task.Reason == DeleteRetention {
			if i > 0 && tasks[i-1].Reason != DeleteRetention || i > 0 && tasks[i-1].Segment.Range.Start > s.Range.Start {
				w.t.Fatalf("retention deletes out of order: %v", summary(tasks))
			}
			if retentionFailed {
				continue // the contract: stop at the first failure
			}
			retentionFailed = !w.runDelete(task)
			continue
		}
		w.runDelete(task)
	}
}

// runDelete reports whether the segment reached DELETE_FINISHED or at
// least left the tier with its objects gone.
func (w *world) runDelete(task DeleteTask) bool {
	s := task.Segment
	for _, st := range task.Steps() {
		s, _ = s.Transition(st)
		if !w.write(s, "writeDeleteStep") {
			return false
		}
	}
	if w.failed("delete") {
		s, _ = s.Transition(remotemeta.Dangling)
		w.write(s, "writeDeleteFailed")
		return false
	}
	delete(w.objects, s.ID)
	s, _ = s.Transition(remotemeta.DeleteFinished)
	w.write(s, "writeDeleteFinished")
	return true
}

func (w *world) checkInvariants() {
	// (a) Every object in the bucket has metadata that is not terminal.
	for id, present := range w.objects {
		s, ok := w.view.Segment(id)
		if present && (!ok || s.State == remotemeta.DeleteFinished) {
			w.t.Fatalf("(a) orphan: objects of %v left, metadata %v %v", id, ok, s.State)
		}
	}
	// (b) The lineage's COPY_FINISHED segments never overlap (an overlap
	// would make the tier unknown), and tieredNext only grows, unless the
	// whole tier went because the log start passed it.
	now := w.view.TieredNext(w.lineage)
	if !now.Known {
		w.t.Fatalf("(b) a loaded view with the lineage %v is unknown", w.lineage)
	}
	prev := w.prevTiered
	if prev.Any && (now.Any && now.Next < prev.Next || !now.Any && w.logStart < prev.Next) {
		w.t.Fatalf("(b) tieredNext went from %+v to %+v with log start %d", prev, now, w.logStart)
	}
	w.prevTiered = now
	// Nothing in [logStart, logEnd) became unreadable.
	var covered []base.Range
	for _, s := range w.local {
		covered = append(covered, s.Range())
	}
	for _, s := range w.view.segs {
		if s.State == remotemeta.CopyFinished {
			covered = append(covered, s.Range)
		}
	}
	for o := w.logStart; o < w.logEnd(); o++ {
		found := false
		for _, r := range covered {
			found = found || r.Contains(o)
		}
		if !found {
			w.t.Fatalf("offset %d in [%d, %d) is neither local nor tiered", o, w.logStart, w.logEnd())
		}
	}
}

func TestTierPassProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _ := NewPartitionView(nil)
		w := &world{
			t: t, view: v, objects: map[remotemeta.SegmentID]bool{},
			local:   []LocalSegment{{Active: true}},
			lineage: []remotemeta.EpochStart{{Epoch: 0, Start: 0}},
		}
		for i, n := 0, rapid.IntRange(1, 60).Draw(t, "steps"); i < n; i++ {
			w.nowMs += rapid.Int64Range(0, 40).Draw(t, "dt")
			w.fail = rapid.Bool().Draw(t, "failures")
			switch rapid.IntRange(0, 5).Draw(t, "action") {
			case 0, 1:
				w.produce(base.Offset(rapid.IntRange(1, 8).Draw(t, "n")))
			case 2:
				w.roll()
			case 3:
				w.newLeader()
			case 4:
				w.pass(rapid.IntRange(0, 4).Draw(t, "loaded") != 0)
			case 5:
				w.pass(true)
			}
		}
		// (a) Every attempt ends DELETE_FINISHED or stays reachable: one
		// pass without failures leaves no object but those of COPY_FINISHED
		// segments, and only COPY_FINISHED or DELETE_FINISHED metadata.
		w.fail = false
		w.pass(true)
		for _, s := range w.view.segs {
			if s.State != remotemeta.CopyFinished && s.State != remotemeta.DeleteFinished {
				t.Fatalf("(a) after a clean pass %v is %v", s.ID, s.State)
			}
		}
		for id := range w.objects {
			if s, _ := w.view.Segment(id); s.State != remotemeta.CopyFinished {
				t.Fatalf("(a) after a clean pass objects of %v (%v) are left", id, s.State)
			}
		}
	})
}
