package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// logFlushSecondsBuckets run from 50 µs to about 6.5 s, ×2 apart: finer
// than the request buckets, since a flush's tail on a slow disk is what an
// operator reads this for (a 4 KiB fdatasync takes ~0.2 ms on a quiet SSD).
var logFlushSecondsBuckets = prometheus.ExponentialBuckets(50e-6, 2, 18)

// LogFlushes is strata_log_flush_seconds: how long each fdatasync round of
// a partition's log took, every partition's in one histogram. Its count is
// the rounds (concurrent producers share one: group commit), its rate
// Kafka's flush rate. Safe for concurrent use.
type LogFlushes struct {
	h prometheus.Histogram
}

// NewLogFlushes returns the histogram, empty.
func NewLogFlushes() *LogFlushes {
	return &LogFlushes{h: prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace,
		Name:      "log_flush_seconds",
		Help: "Time of each fdatasync round of a partition's log, over every partition. " +
			"Kafka: kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs.",
		Buckets: logFlushSecondsBuckets,
	})}
}

// Observe adds one round's time.
func (f *LogFlushes) Observe(d time.Duration) { f.h.Observe(d.Seconds()) }

func (f *LogFlushes) Describe(ch chan<- *prometheus.Desc) { f.h.Describe(ch) }

func (f *LogFlushes) Collect(ch chan<- prometheus.Metric) { f.h.Collect(ch) }
