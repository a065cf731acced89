package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-broker/strata/internal/base"
)

// TierCounters are one partition's counts of remote tier operations since
// the broker started (Kafka's KIP-963 meters). They only grow.
type TierCounters struct {
	TP                                     base.TopicPartition
	CopyRequests, CopyErrors, CopyBytes    int64
	FetchRequests, FetchErrors, FetchBytes int64
	DeleteRequests, DeleteErrors           int64
}

// TierGauges are one partition's tier gauges at the moment of a scrape
// (KIP-963, plus the dangling segments of DESIGN §4). When Loaded is false
// the partition's remote metadata is not known and none is exported; when
// CopyLagKnown is false the copy lag is not.
type TierGauges struct {
	TP                                base.TopicPartition
	Loaded, CopyLagKnown              bool
	CopyLagSegments, CopyLagBytes     int64
	DeleteLagSegments, DeleteLagBytes int64
	RemoteLogSizeBytes                int64
	RemoteLogMetadataCount            int64
	DanglingSegments, DanglingBytes   int64
}

// TierSource is where the tier collector reads, at each scrape. Either
// function may be nil (nothing of that kind is exported).
type TierSource struct {
	Counters func() []TierCounters
	Gauges   func() []TierGauges
}

// tierLabels are the labels of every tier metric.
var tierLabels = []string{"topic", "partition"}

// tierSeries is one metric of the tier collector: its description, how to
// read its value from a partition's snapshot T, and, when not every
// snapshot has a sample, which do.
type tierSeries[T any] struct {
	desc    *prometheus.Desc
	value   func(T) int64
	present func(T) bool // nil: every snapshot
}

// brokerTopicMetric is the Kafka MBean of a KIP-963 metric.
func brokerTopicMetric(name string) string {
	return "kafka.server:type=BrokerTopicMetrics,name=" + name
}

// strataOnly stands for the Kafka MBean of a metric Kafka does not have.
const strataOnly = "none, Strata's own (DESIGN §4)"

func series[T any](name, help, kafka string, value func(T) int64) tierSeries[T] {
	return tierSeries[T]{desc: newDesc(name, help, kafka, tierLabels...), value: value}
}

// onlyWhen returns s sampled only for the snapshots where present holds.
func (s tierSeries[T]) onlyWhen(present func(T) bool) tierSeries[T] {
	s.present = present
	return s
}

// TierCollector exports the remote tier's KIP-963 metrics per topic and
// partition from a TierSource.
type TierCollector struct {
	src      TierSource
	counters []tierSeries[TierCounters]
	gauges   []tierSeries[TierGauges]
}

// NewTierCollector returns the collector of src's metrics.
func NewTierCollector(src TierSource) *TierCollector {
	copyLagKnown := func(g TierGauges) bool { return g.CopyLagKnown }
	return &TierCollector{
		src: src,
		counters: []tierSeries[TierCounters]{
			series("remote_copy_requests_total", "Segment uploads to the remote tier attempted.",
				brokerTopicMetric("RemoteCopyRequestsPerSec"), func(c TierCounters) int64 { return c.CopyRequests }),
			series("remote_copy_errors_total", "Segment uploads to the remote tier that failed.",
				brokerTopicMetric("RemoteCopyErrorsPerSec"), func(c TierCounters) int64 { return c.CopyErrors }),
			series("remote_copy_bytes_total", "Bytes of log data uploaded to the remote tier by uploads that finished.",
				brokerTopicMetric("RemoteCopyBytesPerSec"), func(c TierCounters) int64 { return c.CopyBytes }),
			series("remote_fetch_requests_total", "Reads served from the remote tier.",
				brokerTopicMetric("RemoteFetchRequestsPerSec"), func(c TierCounters) int64 { return c.FetchRequests }),
			series("remote_fetch_errors_total", "Reads from the remote tier that failed.",
				brokerTopicMetric("RemoteFetchErrorsPerSec"), func(c TierCounters) int64 { return c.FetchErrors }),
			series("remote_fetch_bytes_total", "Bytes of record batches read from the remote tier.",
				brokerTopicMetric("RemoteFetchBytesPerSec"), func(c TierCounters) int64 { return c.FetchBytes }),
			series("remote_delete_requests_total", "Remote segment deletions attempted.",
				brokerTopicMetric("RemoteDeleteRequestsPerSec"), func(c TierCounters) int64 { return c.DeleteRequests }),
			series("remote_delete_errors_total", "Remote segment deletions that failed.",
				brokerTopicMetric("RemoteDeleteErrorsPerSec"), func(c TierCounters) int64 { return c.DeleteErrors }),
		},
		gauges: []tierSeries[TierGauges]{
			series("remote_copy_lag_segments", "Rolled local segments not yet uploaded to the remote tier.",
				brokerTopicMetric("RemoteCopyLagSegments"), func(g TierGauges) int64 { return g.CopyLagSegments }).
				onlyWhen(copyLagKnown),
			series("remote_copy_lag_bytes", "Bytes of the rolled local segments not yet uploaded to the remote tier.",
				brokerTopicMetric("RemoteCopyLagBytes"), func(g TierGauges) int64 { return g.CopyLagBytes }).
				onlyWhen(copyLagKnown),
			series("remote_delete_lag_segments", "Remote segments whose deletion is decided but not finished.",
				brokerTopicMetric("RemoteDeleteLagSegments"), func(g TierGauges) int64 { return g.DeleteLagSegments }),
			series("remote_delete_lag_bytes", "Bytes of the remote segments whose deletion is decided but not finished.",
				brokerTopicMetric("RemoteDeleteLagBytes"), func(g TierGauges) int64 { return g.DeleteLagBytes }),
			series("remote_log_size_bytes", "Bytes of log data in the remote tier (COPY_FINISHED segments).",
				brokerTopicMetric("RemoteLogSizeBytes"), func(g TierGauges) int64 { return g.RemoteLogSizeBytes }),
			series("remote_log_metadata_entries", "Remote segment metadata entries in the metadata quorum, DELETE_FINISHED excluded.",
				brokerTopicMetric("RemoteLogMetadataCount"), func(g TierGauges) int64 { return g.RemoteLogMetadataCount }),
			series("remote_dangling_segments", "DANGLING remote segments (failed copies and deletes), deleted again every tier pass.",
				strataOnly, func(g TierGauges) int64 { return g.DanglingSegments }),
			series("remote_dangling_bytes", "Bytes of the DANGLING remote segments.",
				strataOnly, func(g TierGauges) int64 { return g.DanglingBytes }),
		},
	}
}

// Describe sends every metric's description.
func (c *TierCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.counters {
		ch <- s.desc
	}
	for _, s := range c.gauges {
		ch <- s.desc
	}
}

// Collect reads the source once and sends a sample per partition and metric.
func (c *TierCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src.Counters != nil {
		for _, p := range c.src.Counters() {
			collect(ch, c.counters, prometheus.CounterValue, p, p.TP)
		}
	}
	if c.src.Gauges != nil {
		for _, p := range c.src.Gauges() {
			if p.Loaded {
				collect(ch, c.gauges, prometheus.GaugeValue, p, p.TP)
			}
		}
	}
}

func collect[T any](ch chan<- prometheus.Metric, series []tierSeries[T], kind prometheus.ValueType, snap T, tp base.TopicPartition) {
	partition := strconv.Itoa(int(tp.Partition))
	for _, s := range series {
		if s.present == nil || s.present(snap) {
			ch <- prometheus.MustNewConstMetric(s.desc, kind, float64(s.value(snap)), tp.Topic, partition)
		}
	}
}
