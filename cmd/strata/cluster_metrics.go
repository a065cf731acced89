package main

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/metrics"
)

// clusterValues counts, in img, what broker self leads and how its ISRs
// stand against their replicas and minISR (each partition's
// min.insync.replicas), and, on the active controller, the partitions
// without a leader and the fenced brokers.
func clusterValues(img *metadata.Image, self int32, controller bool, minISR func(base.TopicPartition) int) metrics.ClusterValues {
	v := metrics.ClusterValues{ActiveController: controller}
	for name, t := range img.Topics {
		for i, p := range t.Partitions {
			if controller && p.Leader == metadata.NoLeader {
				v.OfflinePartitions++
			}
			if p.Leader != self {
				continue
			}
			v.Leaders++
			// During a reassignment the replicas being added do not count
			// (Kafka's OngoingReassignmentState.replicationFactor).
			if len(p.ISR) < len(p.Replicas)-len(p.AddingReplicas) {
				v.UnderReplicated++
			}
			switch m := minISR(base.TopicPartition{Topic: name, Partition: int32(i)}); {
			case len(p.ISR) < m:
				v.UnderMinISR++
			case len(p.ISR) == m:
				v.AtMinISR++
			}
		}
	}
	if controller {
		for _, b := range img.Brokers {
			if b.Fenced {
				v.FencedBrokers++
			}
		}
	}
	return v
}

// clusterSource reads the cluster gauges of this broker at each scrape.
func clusterSource(meta *metadata.Store, b *broker.Broker) func() metrics.ClusterValues {
	return func() metrics.ClusterValues {
		minISR := func(tp base.TopicPartition) int {
			if p, ok := b.Partition(tp); ok {
				return p.Config().MinInsyncReplicas
			}
			return 1
		}
		v := clusterValues(meta.Image(), b.NodeID(), meta.IsController(), minISR)
		v.VoteWithheld = meta.VoteWithheld()
		v.UncleanElections = meta.UncleanElections()
		return v
	}
}
