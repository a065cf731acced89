package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RequestTiming is where one request's time went between the end of its
// frame's read and the end of its response's write, in the phases of
// Kafka's RequestMetrics. A request is handled as soon as it is read, so
// Kafka's RequestQueueTimeMs has no counterpart.
type RequestTiming struct {
	Key int16
	// Local is decoding and handling: for Produce the validation and the
	// append. Kafka: LocalTimeMs.
	Local time.Duration
	// ResponseQueue is the wait behind the connection's earlier responses,
	// which go out in request order. Kafka: ResponseQueueTimeMs.
	ResponseQueue time.Duration
	// Remote is the wait for the response itself: an acks=all produce's
	// fdatasync, a fetch's long poll. Kafka: RemoteTimeMs.
	Remote time.Duration
	// Send is writing the response. Kafka: ResponseSendTimeMs.
	Send time.Duration
}

// Total is the request's whole time. Kafka: TotalTimeMs.
func (t RequestTiming) Total() time.Duration {
	return t.Local + t.ResponseQueue + t.Remote + t.Send
}

// requestSecondsBuckets run from 50 µs to about 7 s, ×2.5 apart: an acks=all
// produce on a fast disk lands in the first few, a fetch's long poll in the
// last.
var requestSecondsBuckets = prometheus.ExponentialBuckets(50e-6, 2.5, 14)

// RequestTimes keeps a histogram per phase of RequestTiming and per API:
// strata_request_total_seconds{request="Produce"}, and _local_, _remote_,
// _response_queue_ and _send_ likewise. Safe for concurrent use.
type RequestTimes struct {
	total, local, responseQueue, remote, send *prometheus.HistogramVec
	name                                      func(key int16) string
}

// NewRequestTimes returns the histograms; name turns an API key into
// Kafka's request name, e.g. kmsg.NameForKey.
func NewRequestTimes(name func(key int16) string) *RequestTimes {
	vec := func(phase, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace,
			Name:      "request_" + phase + "_seconds",
			Help:      help,
			Buckets:   requestSecondsBuckets,
		}, []string{"request"})
	}
	return &RequestTimes{
		total: vec("total", "Time from a request read to its response written, per API. "+
			"Kafka: kafka.network:type=RequestMetrics,name=TotalTimeMs."),
		local: vec("local", "Time decoding and handling a request (a produce's append), per API. "+
			"Kafka: kafka.network:type=RequestMetrics,name=LocalTimeMs."),
		responseQueue: vec("response_queue", "Time a handled request waited behind its connection's earlier responses, per API. "+
			"Kafka: kafka.network:type=RequestMetrics,name=ResponseQueueTimeMs."),
		remote: vec("remote", "Time waiting for a response (an acks=all produce's fdatasync, a fetch's long poll), per API. "+
			"Kafka: kafka.network:type=RequestMetrics,name=RemoteTimeMs."),
		send: vec("send", "Time writing a response, per API. "+
			"Kafka: kafka.network:type=RequestMetrics,name=ResponseSendTimeMs."),
		name: name,
	}
}

// Observe adds one request's timing.
func (r *RequestTimes) Observe(t RequestTiming) {
	name := r.name(t.Key)
	r.total.WithLabelValues(name).Observe(t.Total().Seconds())
	r.local.WithLabelValues(name).Observe(t.Local.Seconds())
	r.responseQueue.WithLabelValues(name).Observe(t.ResponseQueue.Seconds())
	r.remote.WithLabelValues(name).Observe(t.Remote.Seconds())
	r.send.WithLabelValues(name).Observe(t.Send.Seconds())
}

func (r *RequestTimes) vecs() []*prometheus.HistogramVec {
	return []*prometheus.HistogramVec{r.total, r.local, r.responseQueue, r.remote, r.send}
}

// Describe sends the histograms' descriptions.
func (r *RequestTimes) Describe(ch chan<- *prometheus.Desc) {
	for _, v := range r.vecs() {
		v.Describe(ch)
	}
}

// Collect sends the histograms of every API seen so far.
func (r *RequestTimes) Collect(ch chan<- prometheus.Metric) {
	for _, v := range r.vecs() {
		v.Collect(ch)
	}
}
