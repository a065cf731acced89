package main

import (
	"cmp"
	crand "crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/metrics"
)

// newGroupCoordinator runs the consumer-group coordinator of every
// __consumer_offsets partition this broker leads. The deletion of a share
// group's delivery state goes to the api handler once there is one
// (shareStateDeleter.set).
func newGroupCoordinator(cfg *config.Broker, meta *metadata.Store, clk clock.Clock, logger *slog.Logger) (*coordinatorHost, error) {
	opts := groupOptions(cfg, api.GroupTopics(meta))
	opts.ConsumerGroupSettings = api.GroupConsumerSettings(meta, cfg)
	opts.ShareGroupSettings = api.GroupShareSettings(meta, cfg)
	opts.ProducerIDExpirationNow = api.ProducerIDExpiration(meta, cfg)
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	c := newCoordinatorHost(offsets.TopicName, clk)
	c.census = newGroupCensus()
	c.shareDeletes = &shareStateDeleter{logger: logger}
	rt, err := runtime.New(runtime.Options{
		NewShard: func(p int32) (runtime.Shard, error) {
			o := opts
			o.OnCensus = func(rows []group.GroupCount) { c.census.set(p, rows) }
			return group.New(o)
		},
		Open:          c.open,
		ErrorResponse: group.ErrorResponse,
		Clock:         clk,
		NewTicker:     runtime.NewRealTicker(coordinatorTickInterval),
		MaxQueuedOps:  coordinatorMaxQueuedOps,
		LoadHold:      coordinatorLoadHold,
		Logger:        logger,
		OnEffects:     c.shareDeletes.onEffects,
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
	o.MigrationPolicy = migrationPolicies[cfg.GroupConsumerMigrationPolicy]
	o.ShareSessionTimeout = cfg.GroupShareSessionTimeout
	o.ShareHeartbeatInterval = cfg.GroupShareHeartbeatInterval
	o.ShareMaxSize = int(cfg.GroupShareMaxSize)
	return o
}

// migrationPolicies maps group.consumer.migration.policy's values (as the
// config package validated them) to the coordinator's.
var migrationPolicies = map[string]group.MigrationPolicy{
	"disabled":      group.MigrationDisabled,
	"upgrade":       group.MigrationUpgrade,
	"downgrade":     group.MigrationDowngrade,
	"bidirectional": group.MigrationBidirectional,
}

// clientHost is a connection's remote host as Kafka reports group members'
// hosts ("/127.0.0.1").
// clientAddr is a connection's remote address and port, invalid when it
// is not an IP one.
func clientAddr(addr net.Addr) netip.AddrPort {
	if a, ok := addr.(*net.TCPAddr); ok {
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

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

// groupCensus holds the group census of each __consumer_offsets partition
// this broker coordinates (group.Options.OnCensus), for /metrics. Safe for
// concurrent use.
type groupCensus struct {
	mu     sync.Mutex
	byPart map[int32][]group.GroupCount
}

func newGroupCensus() *groupCensus {
	return &groupCensus{byPart: map[int32][]group.GroupCount{}}
}

func (g *groupCensus) set(p int32, rows []group.GroupCount) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.byPart[p] = rows
}

// drop forgets partition p once this broker no longer coordinates it.
func (g *groupCensus) drop(p int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.byPart, p)
}

// total sums the partitions' censuses, ascending by type, then state.
func (g *groupCensus) total() []metrics.GroupCount {
	g.mu.Lock()
	sums := map[[2]string]int{}
	for _, rows := range g.byPart {
		for _, r := range rows {
			sums[[2]string{r.Type, r.State}] += r.Groups
		}
	}
	g.mu.Unlock()
	out := make([]metrics.GroupCount, 0, len(sums))
	for k, n := range sums {
		out = append(out, metrics.GroupCount{Type: k[0], State: k[1], Groups: n})
	}
	slices.SortFunc(out, func(a, b metrics.GroupCount) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.State, b.State))
	})
	return out
}

// shareStateDeleter carries the group coordinator's DeleteShareState
// effects (a share group deleted) to the api handler, which deletes the
// state from the share coordinator in the background.
type shareStateDeleter struct {
	logger *slog.Logger
	h      atomic.Pointer[api.Handler]
}

func (d *shareStateDeleter) set(h *api.Handler) { d.h.Store(h) }

// onEffects is the group runtime's OnEffects; it must not block.
func (d *shareStateDeleter) onEffects(_ int32, effects []any) {
	for _, e := range effects {
		del, ok := e.(group.DeleteShareState)
		if !ok {
			panic(fmt.Sprintf("strata: unknown group coordinator effect %T", e))
		}
		h := d.h.Load()
		if h == nil {
			d.logger.Warn("a deleted share group's delivery state is kept: the broker is not serving yet", "group", del.Group)
			continue
		}
		go h.DeleteShareState(del.Group, del.Topics)
	}
}
