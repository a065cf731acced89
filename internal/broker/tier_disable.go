package broker

import (
	"context"
	"errors"

	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/tier"
)

// deleteDisabledTiers deletes the remote segments of the partitions whose
// topic turned tiering off with remote.log.delete.on.disable=true (KIP-950;
// config.CheckTopicChange refuses turning it off otherwise). The partition
// moved its log start to its local log start when the config changed, so
// nothing reads those segments any more. Each pass retries what is left;
// the segments' states in the quorum make it survive restarts.
func (b *Broker) deleteDisabledTiers(ctx context.Context) {
	for _, p := range b.Partitions() {
		// Only a leader deletes remote segments, fenced by its epoch.
		if p.Tiered() || !p.IsLeader() {
			continue
		}
		plan := tier.PlanDisable(b.views(p).View(), true, true)
		if len(plan.Delete) == 0 {
			continue
		}
		epoch := p.Offsets().LeaderEpoch
		deleted := 0
		for _, task := range plan.Delete {
			if err := b.opts.Tier.Deleter.Delete(ctx, task, epoch); err != nil {
				if !errors.Is(err, partition.ErrClosed) && ctx.Err() == nil {
					b.logger.Warn("deleting the remote data of a partition whose tiering was turned off (retried)",
						"partition", p.TP().String(), "err", err)
				}
				break
			}
			deleted++
		}
		b.logger.Info("deleted remote segments of a partition whose tiering was turned off",
			"partition", p.TP().String(), "segments", deleted, "of", len(plan.Delete))
	}
}
