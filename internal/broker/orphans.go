package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/tier"
)

// The bucket reconciler's loop (DESIGN §4): every TierDeps.OrphanScanInterval
// it builds the claims of the current metadata image and runs
// TierDeps.Orphans over the whole store, which deletes (or, dry, only
// reports) the segment objects that no metadata claims and that are older
// than the grace period. The tier loops delete what metadata knows; this
// loop is for what it does not.

// validateOrphans checks the reconciler fields of d, when set.
func (d *TierDeps) validateOrphans() error {
	if d.Orphans == nil {
		return nil
	}
	if err := d.Orphans.Validate(); err != nil {
		return fmt.Errorf("broker: the bucket reconciler (strata.remote.orphan.*): %w", err)
	}
	if d.OrphanScanInterval <= 0 {
		return errors.New("broker: Tier.OrphanScanInterval must be positive")
	}
	return nil
}

// startOrphanLoop starts the reconciler loop when the tier has one. It
// stops when b.stop closes; a scan in progress is cancelled then.
func (b *Broker) startOrphanLoop() {
	if b.opts.Tier == nil || b.opts.Tier.Orphans == nil {
		return
	}
	ctx := b.contextUntilStop()
	b.every(b.opts.Tier.OrphanScanInterval, func() { b.orphanPass(ctx) })
}

// contextUntilStop returns a context cancelled when b.stop closes. The
// goroutine that cancels it is one of b's loops: Close waits for it.
func (b *Broker) contextUntilStop() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		<-b.stop
		cancel()
	}()
	return ctx
}

// orphanPass runs the reconciler once against the image of now and logs
// its outcome. No claims, no scan: a listing planned against part of the
// metadata would make the rest of the bucket look orphaned.
func (b *Broker) orphanPass(ctx context.Context) {
	if !b.opts.Meta.IsController() {
		return // the controller's chore
	}
	claims, err := ClaimsOf(b.opts.Meta.Image())
	if err != nil {
		b.logger.Error("bucket reconciler: no scan this time", "err", err)
		return
	}
	started := b.opts.Clock.Now()
	rep, err := b.opts.Tier.Orphans.Run(ctx, "", claims)
	if ctx.Err() != nil && rep.Deleted.Objects == 0 {
		return // the broker is stopping, and the scan did nothing to report
	}
	b.logOrphans(rep, err, b.opts.Clock.Now().Sub(started))
}

// ClaimsOf is every segment attempt img claims: the segments of each
// partition of each live topic, and all objects of the topics pending
// remote delete. `strata inspect tier --orphans` plans with it too.
func ClaimsOf(img *metadata.Image) (tier.Claims, error) {
	var views []tier.PartitionView
	for id, t := range img.TopicsByID {
		for _, p := range t.Partitions {
			segs := img.RemoteSegments(id, p.Index)
			if len(segs) == 0 {
				continue
			}
			v, err := tier.NewPartitionView(segs)
			if err != nil {
				return tier.Claims{}, fmt.Errorf("remote segment metadata of %s-%d: %w", t.Name, p.Index, err)
			}
			views = append(views, v)
		}
	}
	pending := img.PendingRemoteDeletes()
	ids := make([]base.TopicID, 0, len(pending))
	for _, t := range pending {
		ids = append(ids, t.TopicID)
	}
	return tier.NewClaims(views, ids)
}

// logOrphans reports one scan: each orphan, then a summary line.
func (b *Broker) logOrphans(rep tier.ReconcileReport, runErr error, took time.Duration) {
	action := "deleted orphaned remote object"
	switch {
	case rep.DryRun:
		action = "orphaned remote object (dry run: kept)"
	case runErr != nil || rep.Failed.Objects > 0:
		action = "orphaned remote object (delete attempted)"
	}
	for _, oi := range rep.Plan.Orphans {
		b.logger.Info(action, "key", oi.Key, "bytes", oi.Size, "modified", oi.LastModified.UTC().Format(time.RFC3339))
	}
	attrs := []any{
		"dry_run", rep.DryRun, "claimed", rep.Claimed.Objects, "claimed_bytes", rep.Claimed.Bytes,
		"orphans", rep.Orphans.Objects, "orphan_bytes", rep.Orphans.Bytes,
		"deleted", rep.Deleted.Objects, "failed", rep.Failed.Objects,
		"young", rep.Young.Objects, "foreign", rep.Foreign.Objects, "took", took,
	}
	switch {
	case runErr != nil:
		b.logger.Warn("bucket reconciler scan failed (retried next scan)", append(attrs, "err", runErr)...)
	case rep.DeleteErr != nil:
		b.logger.Warn("bucket reconciler: some orphans were not deleted (retried next scan)", append(attrs, "err", rep.DeleteErr)...)
	default:
		b.logger.Info("bucket reconciler scan", attrs...)
	}
}
