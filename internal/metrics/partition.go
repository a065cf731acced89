package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-broker/strata/internal/base"
)

// PartitionGauges are one partition's transaction gauges at a scrape.
type PartitionGauges struct {
	TP base.TopicPartition
	// LastStableOffsetLag is the high watermark minus the last stable
	// offset: how far read_committed consumers are held back by open
	// transactions. A lag that never returns to 0 is a hanging transaction.
	LastStableOffsetLag int64
	// OpenTransactions is the number of producers with an open
	// transaction on the partition.
	OpenTransactions int64
}

// PartitionCollector exports PartitionGauges per topic and partition.
type PartitionCollector struct {
	read   func() []PartitionGauges
	gauges []tierSeries[PartitionGauges]
}

// NewPartitionCollector returns the collector of the gauges read returns at
// each scrape.
func NewPartitionCollector(read func() []PartitionGauges) *PartitionCollector {
	return &PartitionCollector{read: read, gauges: []tierSeries[PartitionGauges]{
		series("last_stable_offset_lag", "High watermark minus last stable offset (open transactions hold read_committed consumers back).",
			"kafka.cluster:type=Partition,name=LastStableOffsetLag", func(g PartitionGauges) int64 { return g.LastStableOffsetLag }),
		series("open_transactions", "Producers with an open transaction on the partition.",
			"none, Strata's own", func(g PartitionGauges) int64 { return g.OpenTransactions }),
	}}
}

// Describe implements prometheus.Collector.
func (c *PartitionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.gauges {
		ch <- s.desc
	}
}

// Collect reads the partitions once and sends a sample per partition and
// gauge.
func (c *PartitionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.read() {
		collect(ch, c.gauges, prometheus.GaugeValue, g, g.TP)
	}
}
