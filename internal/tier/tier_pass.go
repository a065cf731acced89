package tier

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// DeleteReason says why a remote segment is deleted, for the log line and
// the metrics of each deletion.
type DeleteReason int

const (
	// DeleteRetention: the retention decision deletes the segment's range.
	DeleteRetention DeleteReason = iota + 1
	// DeleteDangling: a failed copy or delete, retried every pass until
	// DELETE_FINISHED (reference 002).
	DeleteDangling
	// DeleteAbandonedCopy: COPY_STARTED with no copy in flight. The copier
	// failed before it could record DANGLING, or crashed, or lost its
	// leadership; objects may be left.
	DeleteAbandonedCopy
	// DeleteUnfinished: DELETE_STARTED with no delete in flight (a crash
	// between the state write and the object deletes). Deletes are
	// idempotent, so the pass simply runs it again.
	DeleteUnfinished
	// DeleteStray: COPY_FINISHED outside the leader's lineage (diverged
	// history, or older than the epoch cache) and entirely below log start.
	DeleteStray
	// DeleteOnDisable: tiering was turned off with
	// remote.log.delete.on.disable=true (KIP-950).
	DeleteOnDisable
	// DeleteTopic: the segment's topic was deleted; its remote data goes
	// with it, retried until done, across restarts.
	DeleteTopic
)

func (r DeleteReason) String() string {
	switch r {
	case DeleteRetention:
		return "retention"
	case DeleteDangling:
		return "dangling"
	case DeleteAbandonedCopy:
		return "abandoned-copy"
	case DeleteUnfinished:
		return "unfinished-delete"
	case DeleteStray:
		return "stray"
	case DeleteOnDisable:
		return "delete-on-disable"
	case DeleteTopic:
		return "topic-deleted"
	}
	return fmt.Sprintf("DeleteReason(%d)", int(r))
}

// DeleteTask is one remote segment to delete. The executor writes each of
// Steps() in order, deletes the segment's objects, then writes
// DELETE_FINISHED, or DANGLING if the objects could not all be deleted (so
// the next pass retries). Its metadata is never dropped before
// DELETE_FINISHED: every object stays reachable for deletion.
type DeleteTask struct {
	Segment remotemeta.RemoteSegment
	Reason  DeleteReason
}

// Steps are the states to write before any object is deleted, so that the
// quorum says DELETE_STARTED while objects disappear.
func (t DeleteTask) Steps() []remotemeta.State {
	switch t.Segment.State {
	case remotemeta.CopyStarted:
		return []remotemeta.State{remotemeta.Dangling, remotemeta.DeleteStarted}
	case remotemeta.CopyFinished, remotemeta.Dangling:
		return []remotemeta.State{remotemeta.DeleteStarted}
	case remotemeta.DeleteStarted:
		return nil
	}
	panic(fmt.Sprintf("tier: DeleteTask for segment %v in state %v", t.Segment.ID, t.Segment.State))
}

// PlanDeletes decides which remote segments one pass deletes: the
// COPY_FINISHED segments whose ranges d deletes, and every segment left in
// a state with objects but no future (DANGLING, COPY_STARTED,
// DELETE_STARTED). d must come from retention.Plan on a snapshot whose
// tier came from view (RetentionTier); it panics on a range d deletes that
// view has no COPY_FINISHED segment for, or one at or above d.NewLogStart.
//
// The DeleteRetention tasks come first, oldest first. The executor runs
// them in order and stops at the first that fails (the rest are planned
// again next pass), so the tier shrinks from its oldest end only and
// tieredNext never moves back while any of the tier remains. The other
// tasks hold no data of the log; each is attempted whatever the others do.
//
// Precondition: no copy or delete of this partition is in flight. The
// tier loop is one goroutine that copies, then plans, then deletes (DESIGN
// §4: copy and expiry never race), so at this point every COPY_STARTED or
// DELETE_STARTED segment belongs to an attempt that is over. A deposed
// leader still uploading is fenced by the quorum (its COPY_FINISHED write
// fails the transition from DANGLING) and its objects are orphans for the
// reconciler.
//
// A view that is not loaded plans nothing.
func PlanDeletes(view PartitionView, d retention.Decision) []DeleteTask {
	if !view.Loaded() {
		return nil
	}
	doomed := make(map[base.Range]bool, len(d.DeleteRemote))
	for _, r := range d.DeleteRemote {
		if r.End > d.NewLogStart {
			panic(fmt.Sprintf("tier.PlanDeletes: decision deletes %v at or above its log start %d", r, d.NewLogStart))
		}
		doomed[r] = false
	}
	var tasks, cleanup []DeleteTask
	for _, s := range view.segs {
		var reason DeleteReason
		switch s.State {
		case remotemeta.CopyFinished:
			if _, ok := doomed[s.Range]; ok {
				doomed[s.Range] = true
				tasks = append(tasks, DeleteTask{Segment: s, Reason: DeleteRetention})
			}
			continue
		case remotemeta.Dangling:
			reason = DeleteDangling
		case remotemeta.CopyStarted:
			reason = DeleteAbandonedCopy
		case remotemeta.DeleteStarted:
			reason = DeleteUnfinished
		default:
			continue
		}
		cleanup = append(cleanup, DeleteTask{Segment: s, Reason: reason})
	}
	for r, found := range doomed {
		if !found {
			panic(fmt.Sprintf("tier.PlanDeletes: decision deletes %v, which the view has no COPY_FINISHED segment for", r))
		}
	}
	return append(tasks, cleanup...)
}

// PlanStrays returns the COPY_FINISHED segments that are not in lineage
// and end at or below logStart. No retention decision names them (the
// snapshot holds only the lineage's segments), yet they hold no offset of
// the log: a diverged history the leader truncated, or segments older than
// the epoch cache after a crash between a log start move and their
// deletion. Segments not in lineage that reach above logStart are kept
// until log start passes them. A view that is not loaded, or an empty
// lineage, plans nothing. A stray with the range of a lineage segment that
// a decision deletes is in PlanDeletes' tasks too: Pass plans it once
// (appendUnplanned).
func PlanStrays(view PartitionView, lineage []base.EpochStart, logStart base.Offset) []DeleteTask {
	mustValidLineage(lineage)
	if !view.Loaded() || len(lineage) == 0 {
		return nil
	}
	var tasks []DeleteTask
	for _, s := range view.segs {
		if s.State == remotemeta.CopyFinished && s.Range.End <= logStart && !inLineage(s, lineage) {
			tasks = append(tasks, DeleteTask{Segment: s, Reason: DeleteStray})
		}
	}
	return tasks
}

// DisablePlan is what turning tiering off means for one partition.
type DisablePlan struct {
	Copy bool // uploads may run
	// Delete is every segment with objects, when the user asked for the
	// remote tier to go; otherwise empty.
	Delete []DeleteTask
	// MoveLogStartToLocal: once Delete is done the log is only its local
	// part, so the log start moves to the local log start.
	MoveLogStartToLocal bool
}

// PlanDisable applies KIP-950. copyDisabled means uploads are off
// (remote.log.copy.disable=true, or remote.storage.enable=false);
// deleteOnDisable means remote.storage.enable=false together with
// remote.log.delete.on.disable=true. Turning tiering off never deletes
// remote data unless both are true: with copying disabled the tier stays
// readable and retention keeps expiring it as before (PlanDeletes). A view
// that is not loaded deletes nothing.
func PlanDisable(view PartitionView, copyDisabled, deleteOnDisable bool) DisablePlan {
	p := DisablePlan{Copy: !copyDisabled}
	if !copyDisabled || !deleteOnDisable || !view.Loaded() {
		return p
	}
	p.MoveLogStartToLocal = true
	for _, s := range view.segs {
		if s.State != remotemeta.DeleteFinished {
			p.Delete = append(p.Delete, DeleteTask{Segment: s, Reason: DeleteOnDisable})
		}
	}
	return p
}
