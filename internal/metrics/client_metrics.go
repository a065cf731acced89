package metrics

import (
	"cmp"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// ClientSeries is one metric a client pushed (KIP-714), with its labels:
// the client's (instance id, client id, software) and the metric's own
// attributes.
type ClientSeries struct {
	// Name is the client's metric name (org.apache.kafka.producer...).
	Name string
	// Counter: a cumulative sum; otherwise a gauge.
	Counter bool
	Labels  []Label
	Value   float64
}

// Label is one label of a ClientSeries.
type Label struct{ Key, Value string }

// NewClientMetrics returns a collector of what clients pushed, as read
// returns it at each scrape: each metric as strata_client_<name> (dots and
// other characters Prometheus does not take become "_"), its labels the
// union of those its series carry ("" where one has none). The metrics
// come and go with the clients, so the collector is unchecked (it
// describes nothing in advance).
func NewClientMetrics(read func() []ClientSeries) prometheus.Collector {
	return clientMetrics{read: read}
}

type clientMetrics struct{ read func() []ClientSeries }

func (clientMetrics) Describe(chan<- *prometheus.Desc) {}

func (c clientMetrics) Collect(ch chan<- prometheus.Metric) {
	byName := map[string][]ClientSeries{}
	for _, s := range c.read() {
		name := namespace + "_client_" + promName(s.Name)
		byName[name] = append(byName[name], s)
	}
	for name, series := range byName {
		keys := labelKeys(series)
		desc := prometheus.NewDesc(name, "Pushed by clients (KIP-714): "+series[0].Name+".", keys, nil)
		kind := prometheus.GaugeValue
		if series[0].Counter {
			kind = prometheus.CounterValue
		}
		seen := map[string]bool{}
		for _, s := range series {
			values := labelValues(keys, s.Labels)
			id := strings.Join(values, "\x00")
			if seen[id] {
				continue // the same series twice: the first wins
			}
			seen[id] = true
			m, err := prometheus.NewConstMetric(desc, kind, s.Value, values...)
			if err == nil {
				ch <- m
			}
		}
	}
}

// labelKeys is the union of series' label keys, as Prometheus names,
// sorted.
func labelKeys(series []ClientSeries) []string {
	set := map[string]bool{}
	for _, s := range series {
		for _, l := range s.Labels {
			set[promLabel(l.Key)] = true
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// labelValues are labels' values in keys' order; the first label of a
// key wins.
func labelValues(keys []string, labels []Label) []string {
	values := make([]string, len(keys))
	filled := make([]bool, len(keys))
	for _, l := range labels {
		i, ok := slices.BinarySearchFunc(keys, promLabel(l.Key), cmp.Compare)
		if ok && !filled[i] {
			values[i], filled[i] = l.Value, true
		}
	}
	return values
}

// promName makes s a Prometheus metric name fragment: [a-zA-Z0-9_:], other
// characters as "_".
func promName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// promLabel makes s a Prometheus label name: [a-zA-Z0-9_], not starting
// with a digit or "__" (reserved).
func promLabel(s string) string {
	out := strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
	if out == "" || out[0] >= '0' && out[0] <= '9' || strings.HasPrefix(out, "__") {
		out = "a" + out
	}
	return out
}
