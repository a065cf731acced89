package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// clusterMember is this broker's membership of a cluster (Kafka's
// BrokerLifecycleManager): its registration with the controller, the
// heartbeats that keep it unfenced, and the controlled shutdown that moves
// its leaderships away before it stops.
type clusterMember struct {
	meta     *metadata.Store
	id       int32
	epoch    int64 // the registration's broker epoch; fixed for the process
	interval time.Duration
	// shutdownWait bounds the controlled shutdown's wait for the fence.
	shutdownWait time.Duration
	log          *slog.Logger

	fenced atomic.Bool
	// unfenced is closed at the first heartbeat that finds the broker
	// unfenced (awaitUnfenced).
	unfenced     chan struct{}
	unfencedOnce sync.Once
	running      bool          // set by start
	stop         chan struct{} // closed to end the heartbeat loop
	done         chan struct{} // closed when the heartbeat loop has ended
	// lost receives once if another process took over this node id's
	// registration: this process can no longer lead or follow anything.
	lost chan error
}

// registrationRetry paces registration attempts while no controller
// answers.
const registrationRetry = 200 * time.Millisecond

// joinCluster registers this broker (fenced, with a new incarnation, so a
// restart fences whatever its previous process left) with the endpoints
// clients and other brokers reach it at, retrying until a controller
// answers or ctx ends. The heartbeat loop starts with run.
func joinCluster(ctx context.Context, cfg *config.Broker, meta *metadata.Store, advertised map[string]api.Address, logger *slog.Logger) (*clusterMember, error) {
	reg := metadata.BrokerRegistration{ID: cfg.NodeID, Rack: cfg.BrokerRack, Endpoints: brokerEndpoints(cfg, advertised)}
	if _, err := rand.Read(reg.Incarnation[:]); err != nil {
		return nil, fmt.Errorf("drawing a broker incarnation id: %w", err)
	}
	logDir, err := logDirID(cfg.LogDirs[0])
	if err != nil {
		return nil, err
	}
	reg.LogDir = logDir
	b, err := registerBroker(ctx, meta, reg, logger)
	if err != nil {
		return nil, err
	}
	if orphaned := partitionsWithoutISR(meta.Image(), cfg.NodeID); len(orphaned) > 0 {
		logger.Warn("partitions without an in-sync replica: their last one lost its logs (this broker, or another, came back with an empty log directory), so they have no leader; bring back a replica's old disk, or accept losing what only the ISR held with kafka-leader-election --election-type UNCLEAN",
			"count", len(orphaned), "first", orphaned[:min(len(orphaned), 20)])
	}
	m := &clusterMember{
		meta: meta, id: cfg.NodeID, epoch: b.Epoch, interval: cfg.BrokerHeartbeatInterval,
		shutdownWait: min(cfg.BrokerSessionTimeout, maxControlledShutdownWait),
		log:          logger.With("component", "cluster-member"),
		stop:         make(chan struct{}), done: make(chan struct{}), lost: make(chan error, 1),
		unfenced: make(chan struct{}),
	}
	m.fenced.Store(true)
	m.log.Info("registered with the controller", "broker_epoch", b.Epoch, "endpoints", len(reg.Endpoints))
	return m, nil
}

// maxControlledShutdownWait bounds how long a stopping broker waits for the
// controller to fence it (with no quorum it never will).
const maxControlledShutdownWait = 5 * time.Second

func registerBroker(ctx context.Context, meta *metadata.Store, reg metadata.BrokerRegistration, logger *slog.Logger) (*metadata.Broker, error) {
	for attempt := 1; ; attempt++ {
		b, err := meta.RegisterBroker(ctx, reg)
		switch {
		case err == nil:
			return b, nil
		case errors.Is(err, metadata.ErrInvalidBrokerRegistration):
			return nil, fmt.Errorf("registering node.id %d with the controller: %w; check listeners, advertised.listeners and broker.rack", reg.ID, err)
		case errors.Is(err, metadata.ErrStaleBrokerEpoch):
			return nil, fmt.Errorf("node.id %d was registered by another broker process at the same time; give each broker its own node.id", reg.ID)
		}
		if attempt%25 == 0 {
			logger.Warn("registering with the controller: still trying", "attempts", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("registering node.id %d with the controller: %w (last error: %v)", reg.ID, ctx.Err(), err)
		case <-time.After(registrationRetry):
		}
	}
}

// brokerEndpoints are the registered endpoints: every Kafka listener at its
// advertised address.
func brokerEndpoints(cfg *config.Broker, advertised map[string]api.Address) []metadata.Endpoint {
	out := make([]metadata.Endpoint, 0, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		a := advertised[l.Name]
		out = append(out, metadata.Endpoint{Listener: l.Name, Host: a.Host, Port: a.Port, SecurityProtocol: l.Protocol})
	}
	return out
}

// Epoch is the registration's broker epoch, which replica fetches and ISR
// changes carry.
func (m *clusterMember) Epoch() int64 { return m.epoch }

// start sends a heartbeat every broker.heartbeat.interval.ms until
// shutdown; the first one, right away, asks to be unfenced (the broker is
// ready: its partitions are open and its listeners serve). Call it once.
func (m *clusterMember) start() {
	m.running = true
	go m.run()
}

// awaitUnfenced waits, after start, until the controller has unfenced the
// broker, as Kafka's broker finishes starting only then: before, it leads
// nothing and clients get LEADER_NOT_AVAILABLE. Another process taking
// over the registration ends the wait with that error, as does ctx.
func (m *clusterMember) awaitUnfenced(ctx context.Context) error {
	select {
	case <-m.unfenced:
		return nil
	case err := <-m.lost:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the controller to unfence this broker (node.id %d): %w", m.id, ctx.Err())
	}
}

func (m *clusterMember) run() {
	defer close(m.done)
	tick := time.NewTicker(m.interval)
	defer tick.Stop()
	for {
		m.beat()
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
	}
}

func (m *clusterMember) beat() {
	ctx, cancel := context.WithTimeout(context.Background(), max(m.interval, time.Second))
	defer cancel()
	reply, err := m.heartbeat(ctx, false)
	switch {
	case errors.Is(err, metadata.ErrStaleBrokerEpoch):
		m.loseRegistration(fmt.Errorf("node.id %d: the controller no longer knows this process's registration (epoch %d): another broker process registered the same node.id; give each broker its own node.id (%w)", m.id, m.epoch, err))
	case errors.Is(err, metadata.ErrUnknownBroker):
		m.loseRegistration(fmt.Errorf("node.id %d: the controller no longer knows this broker (epoch %d): it was unregistered (UnregisterBroker, kafka-cluster unregister) while it ran; start it again to register anew (%w)", m.id, m.epoch, err))
	case err != nil:
		m.log.Debug("heartbeat failed; trying again at the next", "err", err)
	case reply.Fenced != m.fenced.Load():
		m.fenced.Store(reply.Fenced)
		m.log.Info("fencing changed", "fenced", reply.Fenced, "caught_up", reply.CaughtUp)
		if !reply.Fenced {
			m.unfencedOnce.Do(func() { close(m.unfenced) })
		}
	}
}

// loseRegistration hands err to whoever waits on lost (the first only).
func (m *clusterMember) loseRegistration(err error) {
	select {
	case m.lost <- err:
	default:
	}
}

func (m *clusterMember) heartbeat(ctx context.Context, wantFence bool) (metadata.HeartbeatReply, error) {
	return m.meta.Heartbeat(ctx, metadata.Heartbeat{
		BrokerID: m.id, BrokerEpoch: m.epoch, AppliedVersion: m.meta.Image().Version, WantFence: wantFence,
	})
}

// shutdown ends the heartbeats and asks the controller to fence this
// broker, so that the partitions it leads elect other leaders from their
// ISRs and it leaves the ISRs before it stops serving (Kafka's controlled
// shutdown). It gives up after shutdownWait: without a quorum the broker
// just stops, and the controller fences it when its session expires.
func (m *clusterMember) shutdown() {
	close(m.stop)
	if !m.running {
		return // never asked to be unfenced: it leads nothing
	}
	<-m.done
	ctx, cancel := context.WithTimeout(context.Background(), m.shutdownWait)
	defer cancel()
	for {
		reply, err := m.heartbeat(ctx, true)
		if err == nil && reply.Fenced {
			m.log.Info("controlled shutdown: fenced, leaderships moved")
			return
		}
		select {
		case <-ctx.Done():
			m.log.Warn("controlled shutdown: the controller did not fence this broker in time; stopping anyway", "waited", m.shutdownWait, "err", err)
			return
		case <-time.After(registrationRetry):
		}
	}
}
