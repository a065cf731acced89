package metrics

import "github.com/prometheus/client_golang/prometheus"

// Authentications counts SASL authentications per listener, mechanism and
// outcome: strata_authentications_total{listener, mechanism,
// result="success"|"failure"}, Kafka's successful-authentication-total and
// failed-authentication-total. A steady stream of failures is someone
// guessing passwords. Safe for concurrent use.
type Authentications struct {
	vec *prometheus.CounterVec
}

// NewAuthentications returns the counter.
func NewAuthentications() *Authentications {
	return &Authentications{vec: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "authentications_total",
		Help:      "SASL authentications, per listener, mechanism and result (success, failure). Kafka: successful-authentication-total, failed-authentication-total.",
	}, []string{"listener", "mechanism", "result"})}
}

// Observe counts one finished authentication.
func (a *Authentications) Observe(listener, mechanism string, ok bool) {
	result := "failure"
	if ok {
		result = "success"
	}
	a.vec.WithLabelValues(listener, mechanism, result).Inc()
}

// Describe sends the counter's description.
func (a *Authentications) Describe(ch chan<- *prometheus.Desc) { a.vec.Describe(ch) }

// Collect sends a sample per listener, mechanism and result seen so far.
func (a *Authentications) Collect(ch chan<- prometheus.Metric) { a.vec.Collect(ch) }
