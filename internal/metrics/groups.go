package metrics

import "github.com/prometheus/client_golang/prometheus"

// GroupCount is how many consumer groups of a type ("classic",
// "consumer") are in a state, among the groups this broker coordinates.
type GroupCount struct {
	Type, State string
	Groups      int
}

// NewGroupCounts returns the gauge strata_groups{type,state}: the consumer
// groups this broker coordinates, by protocol type and state, as read
// returns at each scrape.
func NewGroupCounts(read func() []GroupCount) prometheus.Collector {
	return groupCounts{read: read, desc: prometheus.NewDesc(namespace+"_groups",
		"Consumer groups this broker coordinates, by type (classic, consumer) and state. "+
			"Kafka: kafka.server:type=group-coordinator-metrics, group-count by protocol, classic-group-count and consumer-group-count by state.",
		[]string{"type", "state"}, nil)}
}

type groupCounts struct {
	read func() []GroupCount
	desc *prometheus.Desc
}

func (g groupCounts) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g groupCounts) Collect(ch chan<- prometheus.Metric) {
	for _, c := range g.read() {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(c.Groups), c.Type, c.State)
	}
}
