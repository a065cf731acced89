package main

import (
	"time"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/quota"
)

// followerThrottle is this broker's follower replication throttle
// (replication.FollowerThrottle, KIP-73): the topics' throttled replica
// lists, the ISRs and the rate (a dynamic broker config) come from the
// current metadata image at each use.
type followerThrottle struct {
	meta *metadata.Store
	cfg  *config.Broker
	rate *quota.ByteRate
}

func newFollowerThrottle(cfg *config.Broker, meta *metadata.Store) *followerThrottle {
	return &followerThrottle{meta: meta, cfg: cfg, rate: quota.NewByteRate(api.ReplicationQuotaConfig(cfg))}
}

func (f *followerThrottle) Throttled(tp base.TopicPartition) bool {
	t, ok := f.meta.Image().Topics[tp.Topic]
	return ok && api.ReplicaThrottled(t, config.FollowerThrottledReplicas, tp.Partition, f.cfg.NodeID, f.cfg.NodeID)
}

func (f *followerThrottle) Exceeded() bool {
	cluster, own := f.meta.Image().DynamicConfigsOf(f.cfg.NodeID)
	_, bound := f.cfg.WithDynamic(config.Dynamic{Default: cluster, Node: own}).ReplicationThrottle()
	return f.rate.Exceeded(bound, time.Now())
}

func (f *followerThrottle) Record(bytes int64) { f.rate.Record(bytes, time.Now()) }
