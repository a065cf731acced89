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

// NewFailedLogCount returns the gauge strata_failed_logs: the hosted
// partitions whose log failed on an I/O error, as count returns at each
// scrape.
func NewFailedLogCount(count func() int) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "failed_logs",
		Help: "Partitions on this broker whose log failed on an I/O error (a full disk, a failed fsync): they refuse writes until the broker restarts. " +
			"Kafka: kafka.log:type=LogManager,name=OfflineLogDirectoryCount counts log directories instead.",
	}, func() float64 { return float64(count()) })
}

// NewFetchSessionGauges returns the gauges strata_fetch_sessions and
// strata_fetch_session_partitions: the incremental fetch sessions open on
// this broker and the partitions they hold, as read returns at each scrape.
func NewFetchSessionGauges(read func() (sessions, partitions int)) prometheus.Collector {
	return fetchSessionGauges{read: read,
		sessions: prometheus.NewDesc(namespace+"_fetch_sessions",
			"Incremental fetch sessions open. Kafka: kafka.server:type=FetchSessionCache,name=NumIncrementalFetchSessions.", nil, nil),
		partitions: prometheus.NewDesc(namespace+"_fetch_session_partitions",
			"Partitions held by the open fetch sessions. Kafka: kafka.server:type=FetchSessionCache,name=NumIncrementalFetchPartitionsCached.", nil, nil),
	}
}

type fetchSessionGauges struct {
	read                 func() (sessions, partitions int)
	sessions, partitions *prometheus.Desc
}

func (g fetchSessionGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.sessions
	ch <- g.partitions
}

func (g fetchSessionGauges) Collect(ch chan<- prometheus.Metric) {
	s, p := g.read()
	ch <- prometheus.MustNewConstMetric(g.sessions, prometheus.GaugeValue, float64(s))
	ch <- prometheus.MustNewConstMetric(g.partitions, prometheus.GaugeValue, float64(p))
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

// ConnectionValues are the listeners' connection counts, read at each
// scrape.
type ConnectionValues struct {
	Open    int    // connections open now, over every listener
	Refused uint64 // closed as accepted: their address had max.connections.per.ip open
	// Paced connections were held back by max.connection.creation.rate,
	// for PacedSeconds in all.
	Paced        uint64
	PacedSeconds float64
	// IPThrottled connections were closed for their address's
	// connection_creation_rate quota, after being held IPThrottledSeconds
	// in all.
	IPThrottled        uint64
	IPThrottledSeconds float64
}

// NewConnectionGauges returns strata_connections, the connections open on
// every listener; strata_connections_refused_total, the connections
// closed as they were accepted because their address had
// max.connections.per.ip (or its override) open already; and
// strata_connections_paced_total with strata_connection_pacing_seconds_total,
// the connections max.connection.creation.rate held back and for how long;
// strata_connections_ip_throttled_total with
// strata_connection_ip_throttle_seconds_total, the connections closed for
// their address's connection_creation_rate quota and how long they were
// held first.
func NewConnectionGauges(read func() ConnectionValues) prometheus.Collector {
	return connectionGauges{read: read,
		openDesc: prometheus.NewDesc(namespace+"_connections",
			"Client and broker connections open, over every listener. Kafka: kafka.server:type=socket-server-metrics,name=connection-count.", nil, nil),
		refusedDesc: prometheus.NewDesc(namespace+"_connections_refused_total",
			"Connections closed as they were accepted because their address already had max.connections.per.ip (or its override) open.", nil, nil),
		pacedDesc: prometheus.NewDesc(namespace+"_connections_paced_total",
			"New connections held back by max.connection.creation.rate before they were served.", nil, nil),
		pacedSecondsDesc: prometheus.NewDesc(namespace+"_connection_pacing_seconds_total",
			"Time new connections were held back by max.connection.creation.rate, in all. Kafka: the connection-accept-throttle-time sensors.", nil, nil),
		ipThrottledDesc: prometheus.NewDesc(namespace+"_connections_ip_throttled_total",
			"New connections closed, unserved, because their address was over its connection_creation_rate quota.", nil, nil),
		ipThrottleSecondsDesc: prometheus.NewDesc(namespace+"_connection_ip_throttle_seconds_total",
			"Time the connections over their address's connection_creation_rate were held before they were closed, in all. Kafka: the ip-connection-accept-throttle-time sensors.", nil, nil),
	}
}

type connectionGauges struct {
	read                                               func() ConnectionValues
	openDesc, refusedDesc, pacedDesc, pacedSecondsDesc *prometheus.Desc
	ipThrottledDesc, ipThrottleSecondsDesc             *prometheus.Desc
}

func (g connectionGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.openDesc
	ch <- g.refusedDesc
	ch <- g.pacedDesc
	ch <- g.pacedSecondsDesc
	ch <- g.ipThrottledDesc
	ch <- g.ipThrottleSecondsDesc
}

func (g connectionGauges) Collect(ch chan<- prometheus.Metric) {
	v := g.read()
	ch <- prometheus.MustNewConstMetric(g.openDesc, prometheus.GaugeValue, float64(v.Open))
	ch <- prometheus.MustNewConstMetric(g.refusedDesc, prometheus.CounterValue, float64(v.Refused))
	ch <- prometheus.MustNewConstMetric(g.pacedDesc, prometheus.CounterValue, float64(v.Paced))
	ch <- prometheus.MustNewConstMetric(g.pacedSecondsDesc, prometheus.CounterValue, v.PacedSeconds)
	ch <- prometheus.MustNewConstMetric(g.ipThrottledDesc, prometheus.CounterValue, float64(v.IPThrottled))
	ch <- prometheus.MustNewConstMetric(g.ipThrottleSecondsDesc, prometheus.CounterValue, v.IPThrottledSeconds)
}
