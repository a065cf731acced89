package metrics

import "github.com/prometheus/client_golang/prometheus"

// CleanerValues is what the log cleaner metrics read at a scrape.
type CleanerValues struct {
	MaxDirtyPercent float64
	// SinceLastRunSeconds and the two below are exported only once a pass ran
	// (HasRun).
	HasRun              bool
	SinceLastRunSeconds float64
	RecopyPercent       float64
	LastCleanSeconds    float64
	Uncleanable         int
	Passes              int64
	BytesRead           int64
	BytesWritten        int64
}

// NewCleanerCollector returns the log cleaner's metrics, with Kafka's
// names where Kafka has one (kafka.log:type=LogCleaner and
// type=LogCleanerManager), as read returns them at each scrape.
func NewCleanerCollector(read func() CleanerValues) prometheus.Collector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_log_cleaner_"+name, help, nil, nil)
	}
	return cleanerCollector{read: read,
		maxDirty:     d("max_dirty_percent", "Dirty share of the dirtiest compacted partition when the cleaner last looked. Kafka: kafka.log:type=LogCleanerManager,name=max-dirty-percent."),
		sinceLastRun: d("time_since_last_run_seconds", "Seconds since the cleaner's last pass ended. Kafka: kafka.log:type=LogCleanerManager,name=time-since-last-run-ms."),
		recopy:       d("recopy_percent", "Bytes the last pass wrote, as a percentage of the bytes it read. Kafka: kafka.log:type=LogCleaner,name=cleaner-recopy-percent."),
		cleanTime:    d("last_clean_time_seconds", "How long the last pass took. Kafka: kafka.log:type=LogCleaner,name=max-clean-time-secs (of the last pass only)."),
		uncleanable:  d("uncleanable_partitions", "Partitions the cleaner skips since a pass over them failed, until they are reopened. Kafka: kafka.log:type=LogCleanerManager,name=uncleanable-partitions-count."),
		passes:       d("passes_total", "Cleaning passes run. Kafka: none."),
		readBytes:    d("read_bytes_total", "Bytes of segments the cleaner rewrote, before. Kafka: none."),
		written:      d("written_bytes_total", "Bytes of the segments the cleaner wrote. Kafka: none."),
	}
}

type cleanerCollector struct {
	read                                      func() CleanerValues
	maxDirty, sinceLastRun, recopy, cleanTime *prometheus.Desc
	uncleanable, passes, readBytes, written   *prometheus.Desc
}

func (c cleanerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.maxDirty, c.sinceLastRun, c.recopy, c.cleanTime, c.uncleanable, c.passes, c.readBytes, c.written} {
		ch <- d
	}
}

func (c cleanerCollector) Collect(ch chan<- prometheus.Metric) {
	v := c.read()
	gauge := func(d *prometheus.Desc, x float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, x) }
	counter := func(d *prometheus.Desc, x int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(x))
	}
	gauge(c.maxDirty, v.MaxDirtyPercent)
	gauge(c.uncleanable, float64(v.Uncleanable))
	if v.HasRun {
		gauge(c.sinceLastRun, v.SinceLastRunSeconds)
		gauge(c.recopy, v.RecopyPercent)
		gauge(c.cleanTime, v.LastCleanSeconds)
	}
	counter(c.passes, v.Passes)
	counter(c.readBytes, v.BytesRead)
	counter(c.written, v.BytesWritten)
}
