package metrics

import "github.com/prometheus/client_golang/prometheus"

// ClusterValues are the replication and controller counts of one broker,
// read from the metadata image at each scrape.
type ClusterValues struct {
	// Of the partitions this broker leads:
	Leaders          int // all of them
	UnderReplicated  int // with fewer in-sync replicas than replicas
	AtMinISR         int // whose ISR is exactly their min.insync.replicas
	UnderMinISR      int // whose ISR is below it: acks=all writes fail
	ActiveController bool
	// VoteWithheld: this node is a voter of the metadata quorum that lost
	// its state and catches up without voting.
	VoteWithheld bool
	// Counted by the active controller only (0 elsewhere, as in Kafka, so
	// that a sum over brokers counts each once):
	OfflinePartitions int // without a leader
	FencedBrokers     int
	// UncleanElections counts the leaders this node elected outside the
	// ISR as controller, since it started (a counter).
	UncleanElections uint64
}

// NewClusterGauges returns the gauges of read: strata_leader_partitions,
// strata_under_replicated_partitions, strata_at_min_isr_partitions,
// strata_under_min_isr_partitions, strata_active_controller,
// strata_offline_partitions, strata_fenced_brokers,
// strata_metadata_vote_withheld and the counter
// strata_unclean_leader_elections_total.
func NewClusterGauges(read func() ClusterValues) prometheus.Collector {
	return clusterGauges{read: read, descs: []*prometheus.Desc{
		prometheus.NewDesc(namespace+"_leader_partitions",
			"Partitions this broker leads. Kafka: kafka.server:type=ReplicaManager,name=LeaderCount.", nil, nil),
		prometheus.NewDesc(namespace+"_under_replicated_partitions",
			"Partitions led here with fewer in-sync replicas than replicas. Kafka: kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions.", nil, nil),
		prometheus.NewDesc(namespace+"_at_min_isr_partitions",
			"Partitions led here whose in-sync replicas are exactly min.insync.replicas. Kafka: kafka.server:type=ReplicaManager,name=AtMinIsrPartitionCount.", nil, nil),
		prometheus.NewDesc(namespace+"_under_min_isr_partitions",
			"Partitions led here with fewer in-sync replicas than min.insync.replicas: acks=all writes to them fail. Kafka: kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount.", nil, nil),
		prometheus.NewDesc(namespace+"_active_controller",
			"1 on the active controller, 0 elsewhere. Kafka: kafka.controller:type=KafkaController,name=ActiveControllerCount.", nil, nil),
		prometheus.NewDesc(namespace+"_offline_partitions",
			"Partitions without a leader, counted by the active controller (0 elsewhere). Kafka: kafka.controller:type=KafkaController,name=OfflinePartitionsCount.", nil, nil),
		prometheus.NewDesc(namespace+"_fenced_brokers",
			"Registered brokers that are fenced, counted by the active controller (0 elsewhere). Kafka: kafka.controller:type=KafkaController,name=FencedBrokerCount.", nil, nil),
		prometheus.NewDesc(namespace+"_metadata_vote_withheld",
			"1 while this node, a voter of the metadata quorum that came back without its metadata state, catches up without voting; 0 otherwise.", nil, nil),
		prometheus.NewDesc(namespace+"_unclean_leader_elections_total",
			"Leaders this node, as controller, elected outside the ISR on its own (unclean.leader.election.enable) since it started: each lost the records only the old ISR held. Kafka: kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec.", nil, nil),
	}}
}

type clusterGauges struct {
	read  func() ClusterValues
	descs []*prometheus.Desc
}

func (g clusterGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range g.descs {
		ch <- d
	}
}

func (g clusterGauges) Collect(ch chan<- prometheus.Metric) {
	v := g.read()
	for i, n := range []int{v.Leaders, v.UnderReplicated, v.AtMinISR, v.UnderMinISR, boolGauge(v.ActiveController),
		v.OfflinePartitions, v.FencedBrokers, boolGauge(v.VoteWithheld)} {
		ch <- prometheus.MustNewConstMetric(g.descs[i], prometheus.GaugeValue, float64(n))
	}
	ch <- prometheus.MustNewConstMetric(g.descs[len(g.descs)-1], prometheus.CounterValue, float64(v.UncleanElections))
}

func boolGauge(b bool) int {
	if b {
		return 1
	}
	return 0
}
