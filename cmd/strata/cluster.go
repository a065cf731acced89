package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/replication"
)

// singleNodeOpenTimeout bounds a single node's wait to lead its own
// quorum. A cluster node waits for its voters as long as it takes (until
// SIGTERM): they may be starting one by one.
const singleNodeOpenTimeout = 30 * time.Second

// openMetadata opens the metadata quorum member: a quorum of this node
// alone, or with controller.quorum.voters a member of the cluster's quorum,
// serving Raft on the controller listener and sending the Kafka clients
// that connect there on kafkaConns.
func openMetadata(ctx context.Context, cfg *config.Broker, logger *slog.Logger, kafkaConns chan<- net.Conn) (*metadata.Store, error) {
	formatted, err := formattedClusterID(cfg)
	if err != nil {
		return nil, err
	}
	opts := metadata.Options{Dir: cfg.MetadataDir, NodeID: cfg.NodeID, Clock: clock.Real{}, Logger: logger,
		LeaderImbalancePercentage: int(cfg.LeaderImbalancePercentage), ClusterID: formatted,
		UncleanLeaderElection: cfg.UncleanLeaderElection}
	if cfg.AutoLeaderRebalance {
		opts.LeaderImbalanceCheckInterval = cfg.LeaderImbalanceCheckInterval
	}
	if !cfg.Clustered() {
		openCtx, cancel := context.WithTimeout(ctx, singleNodeOpenTimeout)
		defer cancel()
		meta, err := metadata.Open(openCtx, opts)
		if err != nil {
			return nil, fmt.Errorf("metadata in %s: %w", cfg.MetadataDir, err)
		}
		return meta, nil
	}
	dirID, err := logDirID(cfg.LogDirs[0])
	if err != nil {
		return nil, err
	}
	opts.DirectoryID = dirID
	opts.BindAddr = cfg.ControllerListener.Addr()
	opts.KafkaConns = kafkaConns
	opts.AdvertiseAddr = cfg.ControllerAdvertised
	opts.Voters = cfg.QuorumVoters
	opts.Bootstrap = cfg.QuorumBootstrap
	opts.BrokerSessionTimeout = cfg.BrokerSessionTimeout
	initial, snapshot, err := kafkaInitialVoters(cfg)
	if err != nil {
		return nil, err
	}
	if initial != nil {
		opts.Voters, opts.Bootstrap = initial, nil
	}
	found := "controller.quorum.voters " + votersString(cfg.QuorumVoters)
	switch {
	case initial != nil:
		found = "the initial controllers " + votersString(initial) + " of Kafka's bootstrap snapshot " + snapshot
	case cfg.StandaloneQuorum:
		found = "controller.quorum.bootstrap.servers naming this node alone, its voter at " + cfg.QuorumVoters[cfg.NodeID]
	case len(cfg.QuorumBootstrap) > 0:
		found = "controller.quorum.bootstrap.servers " + strings.Join(cfg.QuorumBootstrap, ",")
	}
	logger.Info("joining the metadata quorum; a quorum needs a majority of its voters running",
		"by", found, "controller_listener", opts.BindAddr)
	meta, err := metadata.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("metadata quorum (%s, data in %s): %w", found, cfg.MetadataDir, err)
	}
	return meta, nil
}

func votersString(voters map[int32]string) string {
	var b strings.Builder
	for i, id := range slices.Sorted(maps.Keys(voters)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(id)) + "@" + voters[id])
	}
	return b.String()
}

// joinCluster registers this broker with the controller and builds its
// replica fetchers, which broker.New then drives.
func (n *node) joinCluster(ctx context.Context, cfg *config.Broker, advertised map[string]api.Address) error {
	if err := checkReachable(cfg, advertised); err != nil {
		return err
	}
	clients, err := newReplicaClients(cfg, n.meta, n.listenerTLS)
	if err != nil {
		return err
	}
	n.replicaClients = clients
	if n.member, err = joinCluster(ctx, cfg, n.meta, advertised, n.loggers.Logger(loggerCluster)); err != nil {
		return err
	}
	var tierState replication.TierState
	if n.reader != nil {
		tierState = broker.TierState{Meta: n.meta, Reader: n.reader}
	}
	rf := cfg.ReplicaFetch
	n.fetchers, err = replication.NewFetchers(replication.FetchersOptions{
		NodeID:                    cfg.NodeID,
		BrokerEpoch:               n.member.Epoch,
		Client:                    clients.fetcherClient,
		Fetchers:                  rf.Fetchers,
		MaxWait:                   rf.MaxWait,
		MinBytes:                  rf.MinBytes,
		MaxBytes:                  rf.ResponseMaxBytes,
		PartitionMaxBytes:         rf.MaxBytes,
		Backoff:                   rf.Backoff,
		RequestTimeout:            rf.SocketTimeout,
		Tier:                      tierState,
		LastTieredOffsetBootstrap: cfg.FollowerFetchLastTieredOffset,
		Throttle:                  newFollowerThrottle(cfg, n.meta),
		Clock:                     clock.Real{},
		Logger:                    n.loggers.Logger(loggerReplication),
	})
	return err
}

// checkReachable refuses to register an address other brokers and clients
// cannot dial: a listener on every interface needs advertised.listeners.
func checkReachable(cfg *config.Broker, advertised map[string]api.Address) error {
	_, set := cfg.Raw["advertised.listeners"]
	for _, l := range cfg.Listeners {
		if a, ok := cfg.Advertised(l.Name); ok && set && a.Host != "" && a.Port > 0 {
			continue
		}
		if l.Host == "" || l.Host == "0.0.0.0" || l.Host == "::" {
			a := advertised[l.Name]
			return fmt.Errorf("listener %s listens on every interface (%s), so other brokers cannot be told where it is; set advertised.listeners=%s://<host>:%d",
				l.Name, l.Addr(), l.Name, a.Port)
		}
	}
	return nil
}

// onLogFailure is the broker's OnLogFailure: in a cluster the first
// partition whose log fails makes the node leave (serve shuts it down, and
// its controlled shutdown hands its leaderships to in-sync replicas), so
// that the other replicas of its partitions take over, as a Kafka broker
// halts when its only log directory fails. Its disk is most likely full or
// failing for every partition alike. A single node stays up: its
// partitions have no other replica, and their reads still work.
func (n *node) onLogFailure(cfg *config.Broker) func(base.TopicPartition, error) {
	if !cfg.Clustered() {
		return nil
	}
	n.logFailed = make(chan error, 1)
	return func(tp base.TopicPartition, err error) {
		select {
		case n.logFailed <- fmt.Errorf("partition %v: its log failed, so this node leaves for the other replicas to take over: %w", tp, err):
		default: // the node is leaving already
		}
	}
}

// registrationLost receives an error if another process took this node's
// registration; never on a single node.
func (n *node) registrationLost() <-chan error {
	if n.member == nil {
		return nil
	}
	return n.member.lost
}
