package metrics

import "github.com/prometheus/client_golang/prometheus"

// NewPartitionCount returns the gauge strata_partitions: the
// partitions hosted on this broker, as count returns at each scrape.
func NewPartitionCount(count func() int) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "partitions",
		Help:      "Partitions hosted on this broker. Kafka: kafka.server:type=ReplicaManager,name=PartitionCount.",
	}, func() float64 { return float64(count()) })
}

// Requests counts the requests handed to the API layer, per API: the
// counter strata_requests_total{request="Produce"}. Safe for concurrent
// use.
type Requests struct {
	vec  *prometheus.CounterVec
	name func(key int16) string
}

// NewRequests returns the request counter; name turns an API key into
// Kafka's request name (Produce, Fetch, ...), e.g. kmsg.NameForKey.
func NewRequests(name func(key int16) string) *Requests {
	return &Requests{
		vec: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "requests_total",
			Help:      "Requests received, per API. Kafka: kafka.network:type=RequestMetrics,name=RequestsPerSec,request=<API>.",
		}, []string{"request"}),
		name: name,
	}
}

// Inc counts one request of the API key.
func (r *Requests) Inc(key int16) { r.vec.WithLabelValues(r.name(key)).Inc() }

// Describe sends the counter's description.
func (r *Requests) Describe(ch chan<- *prometheus.Desc) { r.vec.Describe(ch) }

// Collect sends a sample per API seen so far.
func (r *Requests) Collect(ch chan<- prometheus.Metric) { r.vec.Collect(ch) }
