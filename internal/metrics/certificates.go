package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ListenerCertificate is the certificate a TLS listener serves now.
type ListenerCertificate struct {
	Listener string
	NotAfter time.Time
}

// NewListenerCertificates returns the gauge
// strata_listener_certificate_expiry_timestamp_seconds{listener}: when the
// certificate each TLS listener serves to new connections expires, as
// read returns at each scrape, so that an alert fires before it does
// (`... - time() < 14*86400`). A renewal at run time (listener.name.<l>.
// ssl.keystore.location) moves it. Kafka: none.
func NewListenerCertificates(read func() []ListenerCertificate) prometheus.Collector {
	return listenerCertificates{read: read, desc: prometheus.NewDesc(namespace+"_listener_certificate_expiry_timestamp_seconds",
		"When the certificate a TLS listener serves to new connections expires (its notAfter), in Unix seconds. Kafka: none.",
		[]string{"listener"}, nil)}
}

type listenerCertificates struct {
	read func() []ListenerCertificate
	desc *prometheus.Desc
}

func (c listenerCertificates) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c listenerCertificates) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.read() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(l.NotAfter.Unix()), l.Listener)
	}
}
