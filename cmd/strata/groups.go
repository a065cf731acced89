package main

import (
	crand "crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/partition"
)

const (
	// groupTickInterval is how often each coordinator partition fires its
	// due timers: the resolution of session and rebalance timeouts.
	groupTickInterval = 100 * time.Millisecond
	// groupMaxQueuedOps bounds the requests waiting for one coordinator
	// partition; beyond it clients get COORDINATOR_NOT_AVAILABLE and retry.
	groupMaxQueuedOps = 4096
)

// groupCoordinator runs the consumer-group coordinator of every
// __consumer_offsets partition this broker leads: the broker's OnOpen and
// OnClose hooks start and resign them.
type groupCoordinator struct {
	rt    *runtime.Runtime
	clock clock.Clock
	mu    struct {
		sync.Mutex
		parts map[int32]*partition.Partition
	}
}

func newGroupCoordinator(cfg *config.Broker, clk clock.Clock, logger *slog.Logger) (*groupCoordinator, error) {
	opts := groupOptions(cfg)
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	g := &groupCoordinator{clock: clk}
	g.mu.parts = map[int32]*partition.Partition{}
	rt, err := runtime.New(runtime.Options{
		NewShard:      func(int32) (runtime.Shard, error) { return group.New(opts) },
		Open:          g.open,
		ErrorResponse: group.ErrorResponse,
		Clock:         clk,
		NewTicker:     runtime.NewRealTicker(groupTickInterval),
		MaxQueuedOps:  groupMaxQueuedOps,
		Logger:        logger.With("component", "group-coordinator"),
	})
	if err != nil {
		return nil, err
	}
	g.rt = rt
	return g, nil
}

// groupOptions are Kafka's group defaults with the broker's settings for
// the keys Strata's config knows.
func groupOptions(cfg *config.Broker) group.Options {
	o := group.DefaultOptions(crand.Reader)
	o.InitialRebalanceDelay = cfg.GroupInitialRebalanceDelay
	o.SessionTimeoutMin = cfg.GroupMinSessionTimeout
	o.SessionTimeoutMax = cfg.GroupMaxSessionTimeout
	o.MaxSize = int(cfg.GroupMaxSize)
	o.OffsetsRetention = cfg.OffsetsRetention
	o.OffsetsRetentionCheckInterval = cfg.OffsetsRetentionCheckInterval
	o.OffsetMetadataMaxBytes = int(cfg.OffsetMetadataMaxBytes)
	return o
}

func (g *groupCoordinator) onOpen(p *partition.Partition) {
	tp := p.TP()
	if tp.Topic != offsets.TopicName {
		return
	}
	g.mu.Lock()
	g.mu.parts[tp.Partition] = p
	g.mu.Unlock()
	g.rt.Start(tp.Partition)
}

func (g *groupCoordinator) onClose(p *partition.Partition) {
	tp := p.TP()
	if tp.Topic != offsets.TopicName {
		return
	}
	g.rt.Resign(tp.Partition)
	g.mu.Lock()
	if g.mu.parts[tp.Partition] == p {
		delete(g.mu.parts, tp.Partition)
	}
	g.mu.Unlock()
}

func (g *groupCoordinator) open(idx int32) (runtime.Log, runtime.Appender, error) {
	g.mu.Lock()
	p := g.mu.parts[idx]
	g.mu.Unlock()
	if p == nil {
		return nil, nil, fmt.Errorf("%w: %s-%d is not open here", runtime.ErrNotLeader, offsets.TopicName, idx)
	}
	a := offsets.New(p, g.clock)
	return a, a, nil
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
