package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes every Strata metric.
const namespace = "strata"

// Registry holds the broker's collectors: the Go runtime's and the
// process's (go_*, process_*), and those the caller registers.
type Registry struct {
	reg *prometheus.Registry
}

// NewRegistry returns a registry with the Go and process collectors.
func NewRegistry() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{reg: reg}
}

// MustRegister adds collectors; it panics on a name registered twice (a
// programmer error).
func (r *Registry) MustRegister(cs ...prometheus.Collector) { r.reg.MustRegister(cs...) }

// Gatherer is the registry for tests and tools that read it directly.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handler serves the registry in the Prometheus text format. A collector
// that fails makes the scrape an HTTP 500 naming the error, rather than a
// partial answer that would look like a drop in the counters.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}

// newDesc describes the metric strata_<name> with labels; kafka is the
// MBean it stands for, appended to help.
func newDesc(name, help, kafka string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help+" Kafka: "+kafka+".", labels, nil)
}
