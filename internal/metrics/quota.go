package metrics

import "github.com/prometheus/client_golang/prometheus"

// QuotaThrottles is what the client quotas on one key (producer_byte_rate,
// consumer_byte_rate) have throttled since the broker started.
type QuotaThrottles struct {
	Quota     string
	Throttles int64
	Seconds   float64
}

// NewQuotaThrottleCounters returns the counters
// strata_quota_throttles_total{quota} and
// strata_quota_throttle_seconds_total{quota}: the responses throttled for
// a client over its quota and the throttle times they carried, as read
// returns at each scrape.
func NewQuotaThrottleCounters(read func() []QuotaThrottles) prometheus.Collector {
	return quotaThrottleCounters{read: read,
		throttles: prometheus.NewDesc(namespace+"_quota_throttles_total",
			"Responses throttled because their client was over its quota, per quota key. "+
				"Kafka: the throttle-time sensors of kafka.server:type=Produce and type=Fetch.", []string{"quota"}, nil),
		seconds: prometheus.NewDesc(namespace+"_quota_throttle_seconds_total",
			"Throttle time given to clients over their quota, per quota key.", []string{"quota"}, nil),
	}
}

type quotaThrottleCounters struct {
	read               func() []QuotaThrottles
	throttles, seconds *prometheus.Desc
}

func (c quotaThrottleCounters) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.throttles
	ch <- c.seconds
}

func (c quotaThrottleCounters) Collect(ch chan<- prometheus.Metric) {
	for _, q := range c.read() {
		ch <- prometheus.MustNewConstMetric(c.throttles, prometheus.CounterValue, float64(q.Throttles), q.Quota)
		ch <- prometheus.MustNewConstMetric(c.seconds, prometheus.CounterValue, q.Seconds, q.Quota)
	}
}
