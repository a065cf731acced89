package main

import (
	"time"

	"github.com/strata-broker/strata/internal/clientmetrics"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metrics"
)

// clientPushTTL is how long a client's last push is shown after it came:
// three of Kafka's default push intervals, so a client that went away
// leaves no series behind for long.
const clientPushTTL = 3 * time.Duration(clientmetrics.DefaultIntervalMs) * time.Millisecond

// clientMetrics is the broker's receiver of client metrics (KIP-714): the
// registry that answers clients and the last push of each, which the
// metrics endpoint shows. Only with the metrics endpoint on (Kafka
// advertises the client telemetry APIs only with a receiver).
type clientMetrics struct {
	registry *clientmetrics.Registry
	pushed   *clientmetrics.Latest
}

func newClientMetrics(cfg *config.Broker) (*clientMetrics, error) {
	opts := clientmetrics.DefaultOptions(clock.Real{})
	if cfg.TelemetryMaxBytes > 0 { // a config built by hand may leave it 0
		opts.TelemetryMaxBytes = cfg.TelemetryMaxBytes
	}
	// Cumulative sums: Prometheus counters.
	opts.CumulativeSums = true
	reg, err := clientmetrics.NewRegistry(opts)
	if err != nil {
		return nil, err
	}
	return &clientMetrics{registry: reg, pushed: clientmetrics.NewLatest(clock.Real{}, clientPushTTL, opts.MaxInstances)}, nil
}

// series is what the clients pushed, as the metrics endpoint shows it:
// each sample with its client's labels and its own attributes.
func (c *clientMetrics) series() []metrics.ClientSeries {
	var out []metrics.ClientSeries
	for _, p := range c.pushed.Snapshot() {
		client := []metrics.Label{
			{Key: "client_instance_id", Value: p.Instance.String()},
			{Key: "client_id", Value: p.Client.ClientID},
			{Key: "client_software_name", Value: p.Client.SoftwareName},
			{Key: "client_software_version", Value: p.Client.SoftwareVersion},
		}
		for _, s := range p.Samples {
			labels := append([]metrics.Label(nil), client...)
			for _, a := range s.Attributes {
				labels = append(labels, metrics.Label{Key: a.Key, Value: a.Value})
			}
			out = append(out, metrics.ClientSeries{Name: s.Name, Counter: s.Kind == clientmetrics.KindCounter && !s.Delta,
				Labels: labels, Value: s.Value})
		}
	}
	return out
}
