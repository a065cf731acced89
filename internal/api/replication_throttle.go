package api

import (
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/quota"
)

// Replication throttles (KIP-73), the leader's side: a follower's fetch of
// a partition whose topic lists it with this broker's id in
// leader.replication.throttled.replicas, while the follower is out of the
// ISR, is answered without records once this broker has sent its throttled
// replicas more than its leader.replication.throttled.rate (a dynamic
// broker config) over the replication quota window; what it is sent is
// counted. The follower's side is in package replication (FollowerThrottle).

// ReplicationQuotaConfig is the sampling of the replication throttles.
func ReplicationQuotaConfig(b *config.Broker) quota.Config {
	return quota.Config{Samples: int(b.ReplicationQuotaWindowNum), Window: b.ReplicationQuotaWindowSize}
}

// ReplicaThrottled reports whether replica's fetches of partition idx of t
// are throttled on broker self by the list key
// (config.LeaderThrottledReplicas on a leader, replica being the fetching
// follower; config.FollowerThrottledReplicas on a follower, replica being
// self): the list names the partition with self's id, as Kafka reads it
// (kafka-reassign-partitions lists the existing replicas, which may lead,
// in the leader list and the new ones in the follower list), and replica
// is out of the ISR.
func ReplicaThrottled(t *metadata.Topic, key string, idx, self, replica int32) bool {
	v := t.Configs[key]
	if v == "" || idx < 0 || int(idx) >= len(t.Partitions) {
		return false
	}
	if !config.ParseThrottledReplicas(v).Has(idx, self) {
		return false
	}
	return !slices.Contains(t.Partitions[idx].ISR, replica)
}

// leaderThrottled reports whether any of targets is throttled and this
// broker has sent its throttled followers more than its rate now.
func (h *Handler) leaderThrottled(targets []replicaTarget) bool {
	if !slices.ContainsFunc(targets, func(t replicaTarget) bool { return t.throttled }) {
		return false
	}
	rate, _ := h.brokerConfig(h.opts.Meta.Image()).ReplicationThrottle()
	return h.leaderThrottle.Exceeded(rate, time.Now())
}
