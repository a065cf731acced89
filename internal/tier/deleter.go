package tier

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Deleter executes DeleteTasks: it deletes a remote segment's objects and
// records each step in the metadata quorum. Store and Meta are required.
type Deleter struct {
	Store objstore.Store
	Meta  MetadataWriter
	Stats *Stats // counts deletions and failures; nil counts nothing
}

// Delete writes task.Steps() through Meta, deletes every object the
// segment may have (every Suffix; a missing object is fine, so a retry is
// idempotent), then writes DELETE_FINISHED. If an object delete fails, the
// segment is marked DANGLING (best effort; DELETE_STARTED is retried too)
// and the error returned, wrapped: objstore.IsTransient classifies it. If a
// step cannot be recorded, no object is touched.
func (d *Deleter) Delete(ctx context.Context, task DeleteTask, leaderEpoch base.Epoch) error {
	if d.Store == nil || d.Meta == nil {
		panic("tier.Deleter: Store and Meta are required")
	}
	seg := task.Segment
	d.Stats.deleteStarted(seg.TP)
	fail := func(what string, err error) error {
		d.Stats.deleteFailed(seg.TP)
		return fmt.Errorf("tier: delete %v %v segment %v (%v): %s: %w", seg.TP, seg.Range, seg.ID, task.Reason, what, err)
	}
	for _, st := range task.Steps() {
		next, err := seg.Transition(st)
		if err == nil {
			err = d.Meta.UpdateRemoteSegment(ctx, next, leaderEpoch)
		}
		if err != nil {
			return fail("record "+st.String(), err)
		}
		seg = next
	}
	var errs []error
	for _, s := range Suffixes {
		if err := d.Store.Delete(ctx, SegmentKey(seg, s)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		if dangling, terr := seg.Transition(remotemeta.Dangling); terr == nil {
			dctx, cancel := danglingWriteContext(ctx)
			_ = d.Meta.UpdateRemoteSegment(dctx, dangling, leaderEpoch)
			cancel()
		}
		return fail("delete objects", err)
	}
	finished, err := seg.Transition(remotemeta.DeleteFinished)
	if err == nil {
		err = d.Meta.UpdateRemoteSegment(ctx, finished, leaderEpoch)
	}
	if err != nil {
		// The objects are gone; DELETE_STARTED is retried next pass.
		return fail("record "+remotemeta.DeleteFinished.String(), err)
	}
	return nil
}

// RunDeletes runs one pass's delete tasks (PlanDeletes, PlanStrays,
// PlanDisable) as tier_pass.go requires: the DeleteRetention tasks in
// order, stopping at the first that fails (the tier shrinks from its
// oldest end only; the rest are planned again next pass), and every other
// task whatever the others do. It returns how many tasks finished and
// every failure, joined. A context that ends stops it.
func (d *Deleter) RunDeletes(ctx context.Context, tasks []DeleteTask, leaderEpoch base.Epoch) (done int, err error) {
	var errs []error
	retentionFailed := false
	for _, t := range tasks {
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("tier: deletes stopped: %w", ctx.Err()))
			break
		}
		if t.Reason == DeleteRetention && retentionFailed {
			continue
		}
		if err := d.Delete(ctx, t, leaderEpoch); err != nil {
			errs = append(errs, err)
			retentionFailed = retentionFailed || t.Reason == DeleteRetention
			continue
		}
		done++
	}
	return done, errors.Join(errs...)
}
