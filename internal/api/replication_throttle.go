package api

import (
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/quota"
)

// Replication throttles (KIP-73), the leader's side: a follower's fetch of
// a partition whose topic lists that follower's replica in
// leader.replication.throttled.replicas, while the replica is out of the
// ISR, is answered without records once this broker has sent its throttled
// replicas more than its leader.replication.throttled.rate (a dynamic
// broker config) over the replication quota window; what it is sent is
// counted. The follower's side is in package replication (FollowerThrottle).

// ReplicationQuotaConfig is the sampling of the replication throttles.
func ReplicationQuotaConfig(b *config.Broker) quota.Config {
	return quota.Config{Samples: int(b.ReplicationQuotaWindowNum), Window: b.ReplicationQuotaWindowSize}
}

// ReplicaThrottled reports whether broker's replica of partition idx of t
// is throttled by the list key (config.LeaderThrottledReplicas or
// config.FollowerThrottledReplicas): listed, and out of the ISR.
func ReplicaThrottled(t *metadata.Topic, key string, idx, broker int32) bool {
	v := t.Configs[key]
	if v == "" || idx < 0 || int(idx) >= len(t.Partitions) {
		return false
	}
	if !config.ParseThrottledReplicas(v).Has(idx, broker) {
		return false
	}
	return !slices.Contains(t.Partitions[idx].ISR, broker)
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
