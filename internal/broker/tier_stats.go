package broker

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier"
)

// The tier executors count per partition into their tier.Stats (cmd
// exports them as strata_remote_*_total{topic,partition}). Those counts
// follow the partitions hosted here, as Kafka's per-partition metrics do:
// a partition is tracked, from zero, when it opens, and forgotten when it
// closes, which is when its topic is deleted (or replaced by a new topic
// of the same name) or this broker stops hosting it. Both run under b.mu,
// next to OnOpen and OnClose, so they follow the hosted set in order.

// trackTierStatsLocked starts counting tp in the Stats of every tier
// executor.
func (b *Broker) trackTierStatsLocked(tp base.TopicPartition) {
	for _, s := range b.executorStats() {
		s.Track(tp)
	}
}

// forgetTierStatsLocked drops tp's counts from the Stats of every tier
// executor.
func (b *Broker) forgetTierStatsLocked(tp base.TopicPartition) {
	for _, s := range b.executorStats() {
		s.Forget(tp)
	}
}

// executorStats is the Stats of each tier executor, none when tiering is
// off. They are usually one Stats, and may be nil: Track and Forget are
// idempotent, and do nothing on a nil Stats.
func (b *Broker) executorStats() []*tier.Stats {
	d := b.opts.Tier
	if d == nil {
		return nil
	}
	return []*tier.Stats{d.Copier.Stats, d.Deleter.Stats, d.Reader.Stats}
}
