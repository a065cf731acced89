package tier

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Passes over time upload the rolled segments oldest first, contiguously,
// and local retention then drops tiered local segments; every offset of
// the log stays readable from one tier or the other.
func TestPassCopiesInOrderThenExpiresLocally(t *testing.T) {
	h := newPassHarness(t, 3, retention.Policy{LocalRetentionBytes: retention.LimitOf(6 * passBatchBytes)})
	var tieredNext base.Offset
	for round := range 8 {
		h.produce(4)
		rep := h.pass()
		if rep.Failed != nil {
			t.Fatalf("round %d: %v", round, rep.Failed)
		}
		for _, s := range rep.Copied {
			if s.Range.Start != tieredNext {
				t.Fatalf("round %d: copied %v, want it to start at %d", round, copiedRanges(rep.Copied), tieredNext)
			}
			tieredNext = s.Range.End
		}
		if m := rep.Metrics; !m.CopyLagKnown || m.CopyLagSegments != 0 || m.DanglingSegments != 0 {
			t.Fatalf("round %d: metrics %+v", round, m)
		}
		if rep.Decision.NewLogStart != 0 || h.local.logStart != 0 {
			t.Fatalf("round %d: no total retention, yet the log start moved to %d", round, rep.Decision.NewLogStart)
		}
		if err := h.unreadable(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if h.log().Start() == 0 || tieredNext < h.log().Start() {
		t.Fatalf("local log start %d, tiered up to %d: local retention did not run, or lost data", h.log().Start(), tieredNext)
	}
	var finished int64
	for _, s := range h.rig.meta.view().Segments() {
		finished += s.SizeBytes
	}
	if got := h.pass().Metrics.RemoteLogSizeBytes; got != finished || got != int64(tieredNext)*passBatchBytes {
		t.Errorf("RemoteLogSizeBytes %d, want %d", got, finished)
	}
	// The bucket saw the segments in offset order.
	var bases []string
	for _, e := range h.eventsSince(0) {
		if key, ok := strings.CutPrefix(e, "put "); ok {
			bases = append(bases, strings.Split(key, "/")[2][:20])
		}
	}
	if !slices.IsSorted(bases) {
		t.Errorf("uploads out of offset order: %v", bases)
	}
}

// Reference 001 (KAFKA-17212): with one-record segments, size retention
// counts each offset once and never takes the log below retention.bytes,
// whether tiered segments are still held locally or not.
func TestPassSizeRetentionCountsOnceWithOneRecordSegments(t *testing.T) {
	limit := 5 * passBatchBytes
	for name, local := range map[string]retention.Limit{
		"local retention follows total": retention.LimitOf(limit),
		"local retention zero":          retention.LimitOf(0),
	} {
		t.Run(name, func(t *testing.T) {
			h := newPassHarness(t, 0, retention.Policy{RetentionBytes: retention.LimitOf(limit), LocalRetentionBytes: local})
			for round := range 12 {
				h.produce(1)
				h.roll()
				rep := h.pass()
				if rep.Failed != nil {
					t.Fatalf("round %d: %v", round, rep.Failed)
				}
				size := h.sizeBytes()
				if h.log().End() >= 5 && (size < limit || size >= limit+passBatchBytes) {
					t.Fatalf("round %d: log [%d, %d) is %d bytes, want [%d, %d)",
						round, h.local.logStart, h.log().End(), size, limit, limit+passBatchBytes)
				}
				if err := h.unreadable(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if o := h.orphans(); len(o) != 0 {
				t.Errorf("left behind: %v", o)
			}
		})
	}
}

// Reference 000: a fresh leader whose tier is unknown (metadata or epoch
// cache not loaded) copies nothing and deletes nothing, even with a policy
// that would delete almost all of the log; once loaded, a log at its cap
// loses nothing either.
func TestFreshLeaderPassDeletesNothing(t *testing.T) {
	for _, name := range []string{"metadata not loaded", "epoch cache not loaded"} {
		t.Run(name, func(t *testing.T) {
			h := newPassHarness(t, 2, retention.Policy{})
			for range 4 {
				h.produce(3)
				if rep := h.pass(); rep.Failed != nil {
					t.Fatal(rep.Failed)
				}
			}
			h.produce(2) // a rolled segment waiting for upload
			keys, start := h.rig.keys(), h.log().Start()

			h.policy = retention.Policy{RetentionBytes: retention.LimitOf(passBatchBytes), LocalRetentionBytes: retention.LimitOf(0)}
			if name == "metadata not loaded" {
				h.views.unloaded = true
			} else {
				h.lineage = nil
			}
			mark := h.mark()
			rep := h.pass()
			if rep.Failed != nil || len(rep.Copied) != 0 || len(rep.Deleted) != 0 || len(rep.LocalDeleted) != 0 ||
				rep.Decision.NewLogStart != 0 || rep.Metrics.CopyLagKnown {
				t.Fatalf("fresh leader pass: %+v", rep)
			}
			if ev := h.eventsSince(mark); len(ev) != 0 {
				t.Fatalf("fresh leader pass touched the bucket or the quorum: %v", ev)
			}
			if !slices.Equal(h.rig.keys(), keys) || h.log().Start() != start || h.local.logStart != 0 {
				t.Fatalf("fresh leader pass deleted data")
			}

			// Loaded, at its cap (local retention -2: the total): nothing goes.
			h.views.unloaded, h.lineage = false, epoch0
			h.policy = retention.Policy{RetentionBytes: retention.LimitOf(h.sizeBytes()), LocalRetentionBytes: retention.LimitOf(h.sizeBytes())}
			rep = h.pass()
			if rep.Failed != nil || len(rep.Copied) == 0 || rep.Decision.NewLogStart != 0 || len(rep.Deleted) != 0 || len(rep.LocalDeleted) != 0 {
				t.Fatalf("loaded pass at the cap: %+v", rep)
			}
			if err := h.unreadable(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Reference 002 (KIP-1066): an upload fails mid-pass. The attempt is
// DANGLING, the later segments wait, and nothing of it is deleted in that
// pass (its Put may still land). Every later pass copies again and retries
// the delete of the dangling attempt until it is DELETE_FINISHED.
func TestPassRetriesDanglingUntilDeleted(t *testing.T) {
	h := newPassHarness(t, 2, retention.Policy{})
	h.produce(9) // segments [0,2) [2,4) [4,6) [6,8), active [8,9)
	h.failPut(offsetKey(2))
	mark := h.mark()
	rep := h.pass()
	if rep.Failed == nil || !slices.Equal(copiedRanges(rep.Copied), []base.Range{rng(0, 2)}) {
		t.Fatalf("pass 1: copied %v, failed %v", copiedRanges(rep.Copied), rep.Failed)
	}
	dangling := h.rig.meta.view().Dangling()
	if len(dangling) != 1 || dangling[0].Range != rng(2, 4) || rep.Metrics.DanglingSegments != 1 {
		t.Fatalf("pass 1: dangling %v, metrics %+v", dangling, rep.Metrics)
	}
	for _, e := range h.eventsSince(mark) {
		if strings.HasPrefix(e, "delete ") || strings.Contains(e, offsetKey(4)) || strings.Contains(e, offsetKey(6)) {
			t.Fatalf("pass 1: %q: a later segment was copied past the gap, or the failed attempt deleted at once", e)
		}
	}

	id := dangling[0].ID.String()
	for pass := 2; pass <= 4; pass++ {
		h.failDelete(id)
		rep = h.pass()
		if got := h.rig.meta.view().Dangling(); len(got) != 1 || got[0].ID != dangling[0].ID || rep.Failed == nil {
			t.Fatalf("pass %d: dangling %v, failed %v", pass, got, rep.Failed)
		}
	}
	if got := h.rig.meta.view().Finished(epoch0); len(got) != 4 || got[3].Range != rng(6, 8) {
		t.Fatalf("copied again: %v", got)
	}
	h.rig.setInject(nil)
	rep = h.pass()
	if rep.Failed != nil || len(rep.Deleted) != 1 || rep.Deleted[0].Reason != DeleteDangling || rep.Metrics.DanglingSegments != 0 {
		t.Fatalf("pass 5: deleted %v, failed %v, metrics %+v", summary(rep.Deleted), rep.Failed, rep.Metrics)
	}
	if o := h.orphans(); len(o) != 0 {
		t.Fatalf("left behind: %v", o)
	}
	if err := h.unreadable(); err != nil {
		t.Fatal(err)
	}
}

// Copy and expiry never race: in one pass every upload ends before the
// first delete starts, retention may expire what the pass copied (it is
// complete), and the attempt that failed is not deleted in the same pass.
func TestPassCopyNeverRacesExpiry(t *testing.T) {
	h := newPassHarness(t, 2, retention.Policy{RetentionBytes: retention.LimitOf(3 * passBatchBytes)})
	h.produce(9)
	h.failPut(offsetKey(4))
	mark := h.mark()
	rep := h.pass()
	if rep.Failed == nil || len(rep.Copied) != 2 || len(rep.Deleted) == 0 {
		t.Fatalf("copied %v, deleted %v, failed %v", copiedRanges(rep.Copied), summary(rep.Deleted), rep.Failed)
	}
	ev := h.eventsSince(mark)
	lastPut, firstDelete := -1, -1
	for i, e := range ev {
		if strings.HasPrefix(e, "put ") {
			lastPut = i
		}
		if firstDelete < 0 && (strings.HasPrefix(e, "delete ") || e == "meta DELETE_STARTED") {
			firstDelete = i
		}
	}
	if lastPut < 0 || firstDelete < lastPut {
		t.Fatalf("uploads and deletes interleave: %v", ev)
	}
	for _, e := range ev[firstDelete:] {
		if strings.Contains(e, offsetKey(4)) {
			t.Fatalf("the failed attempt was deleted in its own pass: %v", ev)
		}
	}
	for _, d := range rep.Deleted {
		if d.Segment.Range.End > rep.Decision.NewLogStart {
			t.Fatalf("deleted %v at or above log start %d", d.Segment.Range, rep.Decision.NewLogStart)
		}
	}
	if err := h.unreadable(); err != nil {
		t.Fatal(err)
	}
}

// A model-free property: random produce, roll and pass sequences, with
// failures injected into the bucket, the quorum and the local executor.
func TestPassProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		policy := retention.Policy{}
		if rapid.Bool().Draw(rt, "total") {
			policy.RetentionBytes = retention.LimitOf(rapid.Int64Range(1, 10).Draw(rt, "retentionBatches") * passBatchBytes)
		}
		if rapid.Bool().Draw(rt, "local") {
			policy.LocalRetentionBytes = retention.LimitOf(rapid.Int64Range(0, 6).Draw(rt, "localBatches") * passBatchBytes)
		}
		h := newPassHarness(t, rapid.IntRange(1, 4).Draw(rt, "segmentBatches"), policy)
		defer h.close()
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, "action") {
			case 0:
				h.produce(rapid.IntRange(1, 5).Draw(rt, "batches"))
			case 1:
				h.roll()
			default:
				propertyPass(rt, h, step, rapid.IntRange(0, 2).Draw(rt, "faulty") == 0)
			}
		}
	})
}

func propertyPass(rt *rapid.T, h *passHarness, step int, faulty bool) {
	if faulty {
		rnd := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 0))
		h.rig.setInject(func(op objstore.Op, _ string) error {
			if (op == objstore.OpPut || op == objstore.OpDelete) && rnd.IntN(5) == 0 {
				return objstore.After(errInjected)
			}
			return nil
		})
		h.rig.meta.setFail(func(remotemeta.RemoteSegment) error {
			if rnd.IntN(6) == 0 {
				return errInjected
			}
			return nil
		})
		if rnd.IntN(4) == 0 {
			h.local.failNext = errInjected
		}
	}
	before, startBefore, sizeBefore := h.rig.meta.view(), h.local.logStart, h.sizeBytes()
	rep := h.pass()
	h.rig.setInject(nil)
	h.rig.meta.setFail(nil)
	h.local.failNext = nil

	if h.local.logStart < startBefore {
		rt.Fatalf("step %d: log start moved back from %d to %d", step, startBefore, h.local.logStart)
	}
	after := h.rig.meta.view()
	for _, s := range before.Finished(epoch0) {
		if got, _ := after.Segment(idOf(before, s.Range)); got.State != remotemeta.CopyFinished && s.Range.End > rep.Decision.NewLogStart {
			rt.Fatalf("step %d: remote %v deleted at or above the new log start %d", step, s.Range, rep.Decision.NewLogStart)
		}
	}
	if limit := h.policy.RetentionBytes; limit.Set && sizeBefore >= limit.Value && h.sizeBytes() < limit.Value {
		rt.Fatalf("step %d: size %d bytes, below retention.bytes %d", step, h.sizeBytes(), limit.Value)
	}
	if err := h.unreadable(); err != nil {
		rt.Fatalf("step %d: %v", step, err)
	}
	if !faulty {
		if rep.Failed != nil {
			rt.Fatalf("step %d: failure-free pass failed: %v", step, rep.Failed)
		}
		if o := h.orphans(); len(o) != 0 {
			rt.Fatalf("step %d: after a failure-free pass: %v", step, o)
		}
	}
}

var errInjected = errors.New("injected failure")

// idOf is the id of the COPY_FINISHED segment of v with range r.
func idOf(v PartitionView, r base.Range) remotemeta.SegmentID {
	for _, s := range v.Segments() {
		if s.State == remotemeta.CopyFinished && s.Range == r {
			return s.ID
		}
	}
	return remotemeta.SegmentID{}
}

// newStrayHarness is a partition of lineage [(0,0), (1,2)] whose segments
// [0,2) [2,4) [4,6) are tiered (the active one is [6,7)), plus a
// COPY_FINISHED segment of a diverged history with the range [2,4), and a
// policy under which retention moves the log start to 4.
func newStrayHarness(t *testing.T) (*passHarness, remotemeta.RemoteSegment) {
	t.Helper()
	h := newPassHarness(t, 2, retention.Policy{})
	h.lineage = []base.EpochStart{es(0, 0), es(1, 2)}
	h.produce(7)
	if rep := h.pass(); rep.Failed != nil || len(rep.Copied) != 3 {
		t.Fatalf("copy pass: copied %v, failed %v", copiedRanges(rep.Copied), rep.Failed)
	}
	stray := remotemeta.RemoteSegment{
		ID: sid(900), TopicID: testTopicID, TP: testTP, Range: rng(2, 4), LeaderEpochs: []base.EpochStart{es(2, 2)},
		SizeBytes: 2 * passBatchBytes, MaxTimestampMs: 10_004,
	}
	for _, st := range []remotemeta.State{remotemeta.CopyStarted, remotemeta.CopyFinished} {
		stray.State = st
		if err := h.rig.meta.UpdateRemoteSegment(t.Context(), stray, 2); err != nil {
			t.Fatal(err)
		}
	}
	h.policy = retention.Policy{RetentionBytes: retention.LimitOf(3 * passBatchBytes)}
	return h, stray
}

// When the local executor fails, the log start has not moved and readers
// may still be served every offset above it: the pass deletes no remote
// segment that holds offsets at or above the old log start, neither by
// retention nor as a stray (a COPY_FINISHED segment of a diverged history
// is kept until the log start passes it).
func TestPassApplyLocalFailureDeletesNoDataOfTheLog(t *testing.T) {
	h, _ := newStrayHarness(t)
	h.local.failNext = errInjected
	rep := h.pass()
	if !rep.Decided || rep.Decision.NewLogStart != 4 || rep.LocalApplied || rep.Failed == nil {
		t.Fatalf("failed pass: decided %v, new log start %d, applied %v, failed %v",
			rep.Decided, rep.Decision.NewLogStart, rep.LocalApplied, rep.Failed)
	}
	if len(rep.Deleted) != 0 {
		t.Fatalf("the pass whose local executor failed deleted %v", summary(rep.Deleted))
	}
	for _, s := range h.rig.meta.view().Segments() {
		if s.State != remotemeta.CopyFinished {
			t.Fatalf("segment %v %v is %v after a pass whose local executor failed", s.ID, s.Range, s.State)
		}
	}
	if err := h.unreadable(); err != nil {
		t.Fatal(err)
	}
}

// A diverged COPY_FINISHED segment with the range of a lineage segment
// that retention deletes is planned by PlanDeletes (by range) and by
// PlanStrays: the pass deletes it once, and does not fail on a second
// DELETE_STARTED of a DELETE_FINISHED segment.
func TestPassDeletesAStraySharingARetentionRangeOnce(t *testing.T) {
	h, stray := newStrayHarness(t)
	rep := h.pass()
	if rep.Failed != nil || !rep.LocalApplied || h.local.logStart != 4 {
		t.Fatalf("pass: applied %v, log start %d, failed %v", rep.LocalApplied, h.local.logStart, rep.Failed)
	}
	if len(rep.Deleted) != 3 || !slices.ContainsFunc(rep.Deleted, func(d DeleteTask) bool { return d.Segment.ID == stray.ID }) {
		t.Fatalf("pass deleted %v, want [0,2), [2,4) and the stray", summary(rep.Deleted))
	}
	if o := h.orphans(); len(o) != 0 {
		t.Fatalf("left behind: %v", o)
	}
	if err := h.unreadable(); err != nil {
		t.Fatal(err)
	}
}

// noActiveLocal reports its log's segments with none marked active: a
// broken Local.
type noActiveLocal struct{ *passLocal }

func (n noActiveLocal) Segments() []LocalSegment {
	segs := n.passLocal.Segments()
	for i := range segs {
		segs[i].Active = false
	}
	return segs
}

// retention.Plan takes the last local segment for the active one. A Local
// that does not say the last segment is active breaks that contract, and
// the pass plans no retention on it: nothing is deleted, locally or
// remotely, and the pass reports the failure.
func TestPassRefusesLocalSegmentsWithoutAnActiveLast(t *testing.T) {
	h := newPassHarness(t, 2, retention.Policy{})
	h.produce(7) // segments [0,2) [2,4) [4,6), active [6,7)
	if rep := h.pass(); rep.Failed != nil || len(rep.Copied) != 3 {
		t.Fatalf("copy pass: copied %v, failed %v", copiedRanges(rep.Copied), rep.Failed)
	}
	h.policy = retention.Policy{RetentionBytes: retention.LimitOf(passBatchBytes), LocalRetentionBytes: retention.LimitOf(0)}
	end := h.log().End()
	in := PassInput{
		TopicID: testTopicID, TP: testTP, Lineage: h.lineage, LastStableOffset: end, HighWatermark: end,
		LogStart: h.local.logStart, Policy: h.policy, NowMs: 20_000,
	}
	local := noActiveLocal{h.local}
	rep := Pass(t.Context(), in, PassDeps{Local: local, Views: h.views, Copier: h.rig.copier, Deleter: h.rig.deleter})
	if rep.Decided || rep.Failed == nil || rep.LocalApplied || len(rep.Deleted) != 0 || h.log().Start() != 0 || h.local.logStart != 0 {
		t.Fatalf("pass without an active segment: decided %v, applied %v, deleted %v, local start %d, failed %v",
			rep.Decided, rep.LocalApplied, summary(rep.Deleted), h.log().Start(), rep.Failed)
	}
}
