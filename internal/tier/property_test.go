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
// quorum's view, the bucket (which copy attempts have objects in it) and
// the topic's config. Its executor follows the contract of the planners,
// fails at random, and can crash mid-pass; a restart loses everything but
// what the real partition persists (the local log, the log start, the
// epoch cache) and the quorum.
type world struct {
	t        *rapid.T
	fail     bool // inject failures this pass
	local    []LocalSegment
	lineage  []base.EpochStart
	view     PartitionView
	objects  map[remotemeta.SegmentID]bool
	logStart base.Offset
	hw, lso  base.Offset
	nowMs    int64
	nextID   int
	cfg      topicConfig
	// loaded is false from a restart until the new process has read the
	// quorum: its passes see an unloaded view.
	loaded bool
	// crashAt counts the executor actions left before the process dies
	// in this pass (-1: it does not); crashed is set once it has.
	crashAt int
	crashed bool
	// tieredNext and the log start after the previous pass, for the
	// monotonicity checks.
	prevTiered   retention.Tiered
	prevLogStart base.Offset
}

// topicConfig is what AlterConfigs can change between passes.
type topicConfig struct {
	policy retention.Policy
	copy   CopyConfig
}

func (w *world) logEnd() base.Offset { return w.local[len(w.local)-1].NextOffset }

func (w *world) failed(label string) bool {
	return w.fail && rapid.IntRange(0, 3).Draw(w.t, label) == 0
}

// down reports whether the process is dead: it crashed earlier in this
// pass, or crashes before this action.
func (w *world) down() bool {
	if !w.crashed && w.crashAt == 0 {
		w.crashed = true
	}
	if w.crashAt > 0 {
		w.crashAt--
	}
	return w.crashed
}

// write applies one metadata record; a failed write, or one the process
// died before, leaves the quorum as it was.
func (w *world) write(s remotemeta.RemoteSegment, label string) bool {
	if w.down() || w.failed(label) {
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
	a.MaxTimestampMs = w.nowMs
}

func (w *world) roll() {
	a := &w.local[len(w.local)-1]
	if a.NextOffset == a.BaseOffset {
		return
	}
	a.Active = false
	w.local = append(w.local, LocalSegment{BaseOffset: a.NextOffset, NextOffset: a.NextOffset, Active: true})
}

// newLeader bumps the epoch and may re-split the rolled local segments at
// other boundaries, as a replica that rolled on its own schedule would.
func (w *world) newLeader() {
	last := w.lineage[len(w.lineage)-1]
	next := base.EpochStart{Epoch: last.Epoch + 1, Start: w.logEnd()}
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
			MaxTimestampMs: w.nowMs})
		o += n
	}
	w.local = append(split, w.local[len(w.local)-1])
}

// changeConfig alters one topic config, as AlterConfigs would between two
// passes: a retention limit (set, changed or removed), copying turned off
// or on (KIP-950), or the copy lag (KIP-1241).
func (w *world) changeConfig() {
	lim := func(label string, hi int64) retention.Limit {
		if rapid.Bool().Draw(w.t, label+"Set") {
			return retention.LimitOf(rapid.Int64Range(0, hi).Draw(w.t, label))
		}
		return retention.Limit{}
	}
	p := &w.cfg.policy
	switch rapid.IntRange(0, 6).Draw(w.t, "config") {
	case 0:
		p.RetentionMs = lim("retentionMs", 300)
	case 1:
		p.RetentionBytes = lim("retentionBytes", 800)
	case 2:
		p.LocalRetentionMs = lim("localMs", 300)
	case 3:
		p.LocalRetentionBytes = lim("localBytes", 400)
	case 4:
		w.cfg.copy.CopyDisabled = !w.cfg.copy.CopyDisabled
	case 5:
		w.cfg.copy.Lag.Ms = rapid.Int64Range(0, 100).Draw(w.t, "lagMs")
	case 6:
		w.cfg.copy.Lag.Bytes = rapid.Int64Range(0, 200).Draw(w.t, "lagBytes")
	}
}

// restart kills the process at a random point of a pass (or between
// passes): copies and deletes in flight are abandoned where they stand
// (COPY_STARTED or DELETE_STARTED, objects partly written or partly
// gone), and the new process starts with the quorum not yet read.
func (w *world) restart() {
	w.crashAt = rapid.IntRange(0, 12).Draw(w.t, "crashAt")
	w.pass()
	w.crashAt, w.crashed = -1, false
	w.loaded = false
}

func (w *world) pass() {
	w.hw = base.Offset(rapid.Int64Range(int64(w.hw), int64(w.logEnd())).Draw(w.t, "hw"))
	w.lso = base.Offset(rapid.Int64Range(int64(w.lso), int64(w.hw)).Draw(w.t, "lso"))
	seen := PartitionView{} // a leader that has not read the quorum yet
	if w.loaded {
		seen = w.view
	}
	w.copyStep(seen)
	if w.crashed {
		w.checkInvariants()
		return
	}
	if w.loaded {
		seen = w.view
	}
	w.retentionStep(seen)
	w.checkInvariants()
	if !w.crashed && rapid.Bool().Draw(w.t, "quorumRead") {
		w.loaded = true
	}
}

func (w *world) copyStep(seen PartitionView) {
	tasks := PlanCopies(w.local, seen, w.lineage, w.lso, w.cfg.copy, w.nowMs)
	tiered := seen.TieredNext(w.lineage)
	if len(tasks) > 0 && (w.cfg.copy.CopyDisabled || !tiered.Known) {
		w.t.Fatalf("copies %v with copying disabled %v / tier %+v", taskRanges(tasks), w.cfg.copy.CopyDisabled, tiered)
	}
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
		if w.down() {
			w.objects[rec.ID] = rapid.Bool().Draw(w.t, "uploadedBeforeCrash")
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
	w.checkPlannedSize(snap)
	d := retention.Plan(snap, w.cfg.policy, w.nowMs)

	// Apply: the log start (persisted first) and the local deletions,
	// then the remote tasks.
	if w.down() {
		return
	}
	w.logStart = d.NewLogStart
	if w.down() {
		return
	}
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
	if w.down() {
		return false // some objects may be gone; the rest stay, DELETE_STARTED
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

// checkPlannedSize is issue 3's size property on the snapshot a pass
// plans on: the size retention counts never exceeds the unique size of
// the log (each offset held by a segment that ends after the log start,
// counted once), and equals it when the local and remote segment
// boundaries agree (no local segment reaching past the log start
// straddles tieredNext or holds offsets the remote tier does not).
func (w *world) checkPlannedSize(snap retention.Snapshot) {
	planned, ok := retention.CountedBytes(snap)
	if !ok {
		return
	}
	var held []base.Range
	for _, s := range snap.Remote {
		if s.Range.End > snap.LogStart {
			held = append(held, s.Range)
		}
	}
	remoteHeld := held
	agree := true
	for _, s := range snap.Local {
		if s.Range.End <= snap.LogStart {
			continue
		}
		held = append(held, s.Range)
		if snap.Tiered.Any && s.Range.Start < snap.Tiered.Next && !coveredBy(s.Range, remoteHeld) {
			agree = false
		}
	}
	unique := int64(countOffsets(held)) * bytesPerOffset
	if planned > unique || agree && planned != unique {
		w.t.Fatalf("planned size %d, unique size %d (boundaries agree: %v); log start %d, tier %+v, remote %v, local %v",
			planned, unique, agree, snap.LogStart, snap.Tiered, snap.Remote, snap.Local)
	}
}

// countOffsets is the number of distinct offsets in the ranges.
func countOffsets(rs []base.Range) int {
	seen := map[base.Offset]bool{}
	for _, r := range rs {
		for o := r.Start; o < r.End; o++ {
			seen[o] = true
		}
	}
	return len(seen)
}

// coveredBy reports whether every offset of r is in one of rs.
func coveredBy(r base.Range, rs []base.Range) bool {
	for o := r.Start; o < r.End; o++ {
		found := false
		for _, x := range rs {
			found = found || x.Contains(o)
		}
		if !found {
			return false
		}
	}
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
	// The log start never moves backwards, across failures and restarts.
	if w.logStart < w.prevLogStart {
		w.t.Fatalf("log start moved back from %d to %d", w.prevLogStart, w.logStart)
	}
	w.prevLogStart = w.logStart
	// No offset inside retention, [logStart, logEnd), becomes unreadable:
	// each is in a local segment, or in the remote segment a remote read
	// would pick (SegmentAt, in the leader's lineage), whose objects are
	// in the bucket.
	for o := w.logStart; o < w.logEnd(); o++ {
		local := false
		for _, s := range w.local {
			local = local || s.Range().Contains(o)
		}
		if local {
			continue
		}
		s, ok := w.view.SegmentAt(w.lineage, o)
		if !ok || !w.objects[s.ID] {
			w.t.Fatalf("offset %d in [%d, %d) is unreadable: local %v, remote %v %v (objects %v)",
				o, w.logStart, w.logEnd(), localRanges(w.local), ok, s.Range, w.objects[s.ID])
		}
	}
}

func localRanges(local []LocalSegment) []base.Range {
	out := make([]base.Range, len(local))
	for i, s := range local {
		out[i] = s.Range()
	}
	return out
}

// TestTierPassProperties is issue 3's regression test 4: random sequences
// of produce, roll, leader change, copy and retention passes (with
// injected failures), restarts (mid-pass, the next passes blind until the
// quorum is read) and config changes (retention.ms/bytes, local.retention.*,
// remote.log.copy.disable, remote.copy.lag.*). After every pass: no offset
// inside retention is unreadable, the planned size never exceeds the
// unique size (and equals it when boundaries agree), the log start never
// moves back, tieredNext only grows, and no object is orphaned.
func TestTierPassProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v, _ := NewPartitionView(nil)
		w := &world{
			t: t, view: v, objects: map[remotemeta.SegmentID]bool{},
			local:   []LocalSegment{{Active: true}},
			lineage: []base.EpochStart{{Epoch: 0, Start: 0}},
			loaded:  true, crashAt: -1,
		}
		for range rapid.IntRange(0, 3).Draw(t, "initialConfigs") {
			w.changeConfig()
		}
		for i, n := 0, rapid.IntRange(1, 80).Draw(t, "steps"); i < n; i++ {
			w.nowMs += rapid.Int64Range(0, 40).Draw(t, "dt")
			w.fail = rapid.Bool().Draw(t, "failures")
			switch rapid.IntRange(0, 8).Draw(t, "action") {
			case 0, 1:
				w.produce(base.Offset(rapid.IntRange(1, 8).Draw(t, "n")))
			case 2:
				w.roll()
			case 3:
				w.newLeader()
			case 4, 5:
				w.pass()
			case 6:
				w.changeConfig()
			case 7:
				w.restart()
			case 8: // a pass that reads the quorum first, as a settled leader's does
				w.loaded = true
				w.pass()
			}
		}
		// (a) Every attempt ends DELETE_FINISHED or stays reachable: one
		// pass without failures leaves no object but those of COPY_FINISHED
		// segments, and only COPY_FINISHED or DELETE_FINISHED metadata.
		w.fail, w.loaded = false, true
		w.pass()
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
