package main

import (
	crand "crypto/rand"
	"log/slog"
	"net"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/metadata"
)

// newGroupCoordinator runs the consumer-group coordinator of every
// __consumer_offsets partition this broker leads.
func newGroupCoordinator(cfg *config.Broker, meta *metadata.Store, clk clock.Clock, logger *slog.Logger) (*coordinatorHost, error) {
	opts := groupOptions(cfg, api.GroupTopics(meta))
	opts.ConsumerGroupSettings = api.GroupConsumerSettings(meta, cfg)
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	c := newCoordinatorHost(offsets.TopicName, clk)
	rt, err := runtime.New(runtime.Options{
		NewShard:      func(int32) (runtime.Shard, error) { return group.New(opts) },
		Open:          c.open,
		ErrorResponse: group.ErrorResponse,
		Clock:         clk,
		NewTicker:     runtime.NewRealTicker(coordinatorTickInterval),
		MaxQueuedOps:  coordinatorMaxQueuedOps,
		LoadHold:      coordinatorLoadHold,
		Logger:        logger.With("component", "group-coordinator"),
	})
	if err != nil {
		return nil, err
	}
	c.rt = rt
	return c, nil
}

// groupOptions are Kafka's group defaults with the broker's settings for
// the keys Strata's config knows.
func groupOptions(cfg *config.Broker, topics func() group.TopicsView) group.Options {
	o := group.DefaultOptions(topics, crand.Reader)
	o.InitialRebalanceDelay = cfg.GroupInitialRebalanceDelay
	o.SessionTimeoutMin = cfg.GroupMinSessionTimeout
	o.SessionTimeoutMax = cfg.GroupMaxSessionTimeout
	o.MaxSize = int(cfg.GroupMaxSize)
	o.OffsetsRetention = cfg.OffsetsRetention
	o.OffsetsRetentionCheckInterval = cfg.OffsetsRetentionCheckInterval
	o.OffsetMetadataMaxBytes = int(cfg.OffsetMetadataMaxBytes)
	o.ProducerIDExpiration = cfg.ProducerIDExpiration
	o.ConsumerSessionTimeout = cfg.GroupConsumerSessionTimeout
	o.ConsumerHeartbeatInterval = cfg.GroupConsumerHeartbeatInterval
	o.ConsumerMaxSize = int(cfg.GroupConsumerMaxSize)
	o.ConsumerAssignors = cfg.GroupConsumerAssignors
	return o
}

// clientHost is a connection's remote host as Kafka reports group members'
// hosts ("/127.0.0.1").
func clientHost(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "/" + addr.String()
	}
	return "/" + host
}
