package tier

// Pass is one pass of the per-partition tier loop (DESIGN §4), the driver
// of the planners in copy_plan.go and tier_pass.go. The loop that calls it
// (one goroutine per partition, on the leader) is not here: Pass starts no
// goroutine, reads no clock and does its I/O only through its
// dependencies (Local, ViewSource, Copier, Deleter), so a test drives it
// with a real log, an in-memory bucket and an in-memory quorum.
//
// The order is fixed, because copy and expiry never race:
//
//  1. PlanCopies on the current view, then Copy each task in order,
//     stopping at the first failure (a later segment uploaded past a gap
//     would break the contiguity of the tier);
//  2. re-read the view, which now holds this pass's copies;
//  3. snapshot (RetentionTier + the local segments) and retention.Plan,
//     a pure decision;
//  4. apply it: Local.ApplyLocal moves the log start and deletes local
//     segments, then PlanDeletes and PlanStrays run through
//     Deleter.RunDeletes.
//
// Deletes never start before every copy of the pass is over, and a copy
// attempt that failed in this pass is not deleted in it: a Put the client
// gave up on may still land in the bucket, so its cleanup waits for the
// next pass (reference 002). If ApplyLocal fails, no retention delete of
// the remote tier runs: the log start may not have moved, and readers may
// still be served those offsets; the next pass plans them again.

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Local is the local part of the partition a pass works on. The partition
// implements it.
type Local interface {
	// Segments is a snapshot of the local segments, ascending, the active
	// one last.
	Segments() []LocalSegment
	// Source opens sealed segments for upload.
	Source() SegmentSource
	// ApplyLocal executes the local part of d as the partition's retention
	// executor does: it moves the log start to d.NewLogStart (never
	// backward; logging d.Reasons), then deletes the local segments that
	// d.LocalDeletions names. A failure leaves a prefix of that done.
	ApplyLocal(d retention.Decision) error
}

// ViewSource serves the quorum's current view of the partition's remote
// segments; a view that is not loaded yet is PartitionView{}.
type ViewSource interface {
	View() PartitionView
}

// PassInput is what the caller snapshots from the partition before a pass.
// Offsets obey logStart <= highWatermark <= logEnd and lastStableOffset <=
// highWatermark.
type PassInput struct {
	TopicID          base.TopicID
	TP               base.TopicPartition
	LeaderEpoch      base.Epoch
	Lineage          []base.EpochStart // the leader-epoch cache
	LastStableOffset base.Offset
	HighWatermark    base.Offset
	LogStart         base.Offset
	DeleteRecordsTo  base.Offset // the log start DeleteRecords asked for, or 0
	Policy           retention.Policy
	Copy             CopyConfig
	NowMs            int64
}

// PassDeps are the parts a pass does I/O through. All are required.
type PassDeps struct {
	Local   Local
	Views   ViewSource
	Copier  *Copier
	Deleter *Deleter
}

// PassReport is what one pass did, in plain values for logs and metrics.
type PassReport struct {
	// Copied are the COPY_FINISHED segments of this pass, in order.
	Copied []remotemeta.RemoteSegment
	// Decision is the retention plan; Decided is false when the pass
	// stopped before planning (an invalid snapshot).
	Decision retention.Decision
	Decided  bool
	// LocalApplied reports that ApplyLocal succeeded: the log start is
	// Decision.NewLogStart and LocalDeleted are gone.
	LocalApplied bool
	LocalDeleted []base.Range
	// Deleted are the delete tasks that reached DELETE_FINISHED.
	Deleted []DeleteTask
	// Failed joins every error of the pass; the pass went on where it safely
	// could.
	Failed error
	// Metrics are the KIP-963 gauges after the pass: GaugesOf the last
	// view, the local segments and the log start after the pass.
	Metrics Gauges
}

// Pass runs one pass of the tier loop; see the comment at the top of this
// file. Errors are in the report: a pass that fails is simply run again.
func Pass(ctx context.Context, in PassInput, deps PassDeps) PassReport {
	deps.mustValid()
	var rep PassReport
	var errs []error

	before := deps.Views.View()
	tasks := PlanCopies(deps.Local.Segments(), before, in.Lineage, in.LastStableOffset, in.Copy, in.NowMs)
	for _, task := range tasks {
		seg, err := deps.Copier.Copy(ctx, task, deps.Local.Source(), in.TopicID, in.TP, in.LeaderEpoch)
		if err != nil {
			errs = append(errs, err)
			break // never upload past a gap
		}
		rep.Copied = append(rep.Copied, seg)
	}

	view := deps.Views.View()
	local := deps.Local.Segments()
	tiered, remote := view.RetentionTier(in.Lineage, in.HighWatermark)
	snap := retention.Snapshot{
		LogStart: in.LogStart, HighWatermark: in.HighWatermark, Local: retentionSegments(local),
		Remote: remote, Tiered: tiered, DeleteRecordsTo: in.DeleteRecordsTo,
	}
	if err := errors.Join(snap.Validate(), in.Policy.Validate(), lastActive(local)); err != nil {
		errs = append(errs, fmt.Errorf("tier: pass of %v: no retention: %w", in.TP, err))
		rep.Failed = errors.Join(errs...)
		rep.Metrics = GaugesOf(deps.Views.View(), deps.Local.Segments(), in.Lineage, in.LogStart)
		return rep
	}
	d := retention.Plan(snap, in.Policy, in.NowMs)
	mustSafeLocal(d, snap)
	rep.Decision, rep.Decided = d, true

	var deletes []DeleteTask
	logStart := in.LogStart // after this pass: moved only if local retention applied
	if err := deps.Local.ApplyLocal(d); err != nil {
		errs = append(errs, fmt.Errorf("tier: pass of %v: apply local retention: %w", in.TP, err))
		deletes = PlanDeletes(view, retention.Decision{}) // only attempts that hold no data of the log
	} else {
		rep.LocalApplied = true
		for _, s := range d.LocalDeletions(snap.Local) {
			rep.LocalDeleted = append(rep.LocalDeleted, s.Range)
		}
		deletes = PlanDeletes(view, d)
		logStart = d.NewLogStart
	}
	deletes = appendUnplanned(deletes, PlanStrays(view, in.Lineage, logStart))
	deletes = withoutFreshAttempts(deletes, before)
	if len(deletes) > 0 {
		if _, err := deps.Deleter.RunDeletes(ctx, deletes, in.LeaderEpoch); err != nil {
			errs = append(errs, err)
		}
	}

	after := deps.Views.View()
	for _, t := range deletes {
		if s, ok := after.Segment(t.Segment.ID); ok && s.State == remotemeta.DeleteFinished {
			rep.Deleted = append(rep.Deleted, t)
		}
	}
	rep.Failed = errors.Join(errs...)
	rep.Metrics = GaugesOf(after, deps.Local.Segments(), in.Lineage, logStart)
	return rep
}

func (d PassDeps) mustValid() {
	if d.Local == nil || d.Views == nil || d.Copier == nil || d.Deleter == nil {
		panic("tier.Pass: Local, Views, Copier and Deleter are required")
	}
}

// withoutFreshAttempts drops the cleanup of copy attempts that this pass
// started and that failed (not in before, not COPY_FINISHED): their
// objects may still be landing. The next pass deletes them. A fresh
// COPY_FINISHED segment is complete and may go by retention at once.
func withoutFreshAttempts(tasks []DeleteTask, before PartitionView) []DeleteTask {
	out := tasks[:0:0]
	for _, t := range tasks {
		if _, known := before.Segment(t.Segment.ID); !known && t.Segment.State != remotemeta.CopyFinished {
			continue
		}
		out = append(out, t)
	}
	return out
}

// appendUnplanned appends the tasks of more whose segment tasks does not
// delete already. PlanDeletes deletes every COPY_FINISHED segment of a
// range the decision deletes, so a diverged segment with the same range as
// a segment of the lineage is planned there and by PlanStrays too; a
// second delete of it would fail (DELETE_FINISHED is terminal) and fail
// the pass.
func appendUnplanned(tasks, more []DeleteTask) []DeleteTask {
	planned := make(map[remotemeta.SegmentID]bool, len(tasks))
	for _, t := range tasks {
		planned[t.Segment.ID] = true
	}
	for _, t := range more {
		if !planned[t.Segment.ID] {
			tasks = append(tasks, t)
		}
	}
	return tasks
}

// mustSafeLocal asserts §4 rule 5 and rule 6 on d: the log start does not
// move back, and local deletion stops at the log start or at tieredNext.
func mustSafeLocal(d retention.Decision, s retention.Snapshot) {
	limit := d.NewLogStart
	if s.Tiered.Known && s.Tiered.Any {
		limit = max(limit, s.Tiered.Next)
	}
	if d.NewLogStart < s.LogStart || d.DeleteLocalBefore > limit {
		panic(fmt.Sprintf("tier.Pass: decision moves log start %d -> %d, deletes local below %d (limit %d)",
			s.LogStart, d.NewLogStart, d.DeleteLocalBefore, limit))
	}
}

// lastActive checks what retention.Plan assumes of the local segments: the
// last one, and only it, is the active segment.
func lastActive(local []LocalSegment) error {
	if len(local) == 0 || !local[len(local)-1].Active {
		return fmt.Errorf("local segments %d, the last not active", len(local))
	}
	return nil
}

func retentionSegments(local []LocalSegment) []retention.Segment {
	out := make([]retention.Segment, len(local))
	for i, s := range local {
		out[i] = retention.Segment{Range: s.Range(), SizeBytes: s.SizeBytes, MaxTimestampMs: s.MaxTimestampMs}
	}
	return out
}
