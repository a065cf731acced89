package broker

import (
	"cmp"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier"
)

// PartitionTierGauges are the tier gauges of one hosted partition.
type PartitionTierGauges struct {
	TP base.TopicPartition
	tier.Gauges
}

// TierGauges returns the KIP-963 gauges (copy and delete lag, remote log
// size, metadata count) and the dangling segments of every hosted
// partition of a tiered topic, sorted by topic and partition; nil when
// tiering is off on this broker. Each is computed now, by tier.GaugesOf,
// from the quorum's current view and the partition's local segments: it
// is meant for a metrics scrape and does no I/O. The broker imports no
// metrics library; cmd turns these into collectors.
func (b *Broker) TierGauges() []PartitionTierGauges {
	if b.opts.Tier == nil {
		return nil
	}
	var out []PartitionTierGauges
	for _, p := range b.Partitions() {
		if !p.Tiered() {
			continue
		}
		g := tier.GaugesOf(b.views(p).View(), p.TierLocal().Segments(), p.Lineage(), p.Offsets().LogStart)
		out = append(out, PartitionTierGauges{TP: p.TP(), Gauges: g})
	}
	slices.SortFunc(out, func(x, y PartitionTierGauges) int {
		return cmp.Or(cmp.Compare(x.TP.Topic, y.TP.Topic), cmp.Compare(x.TP.Partition, y.TP.Partition))
	})
	return out
}
