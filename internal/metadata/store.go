package metadata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"

	"github.com/strata-broker/strata/internal/clock"
)

const (
	// snapshotsRetained is how many Raft snapshots stay on disk.
	snapshotsRetained = 2
	// tcpMaxPool and tcpTimeout configure the TCP transport's connection pool.
	tcpMaxPool = 3
	tcpTimeout = 10 * time.Second
	// barrierTimeout bounds the wait for the FSM to catch up after winning leadership.
	barrierTimeout = 30 * time.Second
	// takeOfficeRetry is the pause before a leader tries again to take office.
	takeOfficeRetry = time.Second
)

// Options configure a Store. The zero value is invalid; see Validate.
type Options struct {
	// Dir holds the Raft log (raft-wal, in Dir/wal) and snapshots (Dir/snapshots).
	Dir string
	// NodeID is this node's id, also its Raft server id. Must be ≥ 0.
	NodeID int32
	// BindAddr is the Raft TCP transport address (host:port; port 0 picks one).
	// "" selects an in-memory transport that reaches no other node: only for a
	// single-node quorum and tests, with short Raft timeouts. The listener
	// also serves proposals forwarded by the other members.
	BindAddr string
	// AdvertiseAddr is the host:port other members dial to reach this node.
	// "" means this node's address in Voters, or else the listener's address
	// (which must then be a specific IP). Needs a BindAddr.
	AdvertiseAddr string
	// Voters are the voters of a multi-node quorum: node id → Raft address
	// (host:port), Kafka's controller.quorum.voters. nil or empty: a one-voter
	// quorum of this node alone. With Voters, BindAddr must be set; a node in
	// Voters is a voter and must advertise its address there, and on a
	// directory without Raft state it bootstraps the whole voter
	// configuration; any other node is a non-voter that never bootstraps and
	// asks the leader to add it. Voters is read only for that: the voter set
	// of an existing log is the one in the log.
	Voters map[int32]string
	// Bootstrap, for a node without Voters, are Raft addresses (host:port)
	// of members of a multi-node quorum: Kafka's
	// controller.quorum.bootstrap.servers. The node is a member that never
	// bootstraps: it asks them in turn, while it knows no leader, to add
	// it as a non-voter, and AddVoter may make it a voter. With Bootstrap,
	// BindAddr must be set. nil with Voters.
	Bootstrap []string
	// ClusterID is the id a quorum this node bootstraps takes: the one
	// Kafka's `kafka-storage format --cluster-id` wrote into the log dir.
	// "" draws one. Read only while the metadata log has no cluster id.
	ClusterID string
	// KafkaConns, with a BindAddr, receives each connection to it that
	// opens with a Kafka request (an admin client bootstrapped from the
	// controllers, KIP-919: kafka-metadata-quorum --bootstrap-controller),
	// its opening bytes pushed back; the receiver owns the connection from
	// then on. A connection waits to be received until Close, which closes
	// it. nil closes such connections.
	KafkaConns chan<- net.Conn
	// DirectoryID is this node's log directory id, the one it registers
	// with as a broker (Broker.LogDir). A voter that comes back at another
	// address sends it to have its entry in the Raft configuration moved
	// (Kafka's UpdateRaftVoter); the controller checks it against the
	// registration. Zero: such a voter cannot move.
	DirectoryID [16]byte
	// Clock is the time seam (used for reporting; Raft keeps its own timers).
	Clock clock.Clock
	// Logger receives Store events and Raft's warnings and errors. nil discards.
	Logger *slog.Logger
	// BrokerSessionTimeout is Kafka's broker.session.timeout.ms: while this
	// node is the controller, it fences a registered broker that sends no
	// Heartbeat for that long. 0 fences nobody for silence.
	BrokerSessionTimeout time.Duration
	// LeaderImbalanceCheckInterval is Kafka's
	// leader.imbalance.check.interval.seconds with
	// auto.leader.rebalance.enable: while this node is the controller, it
	// moves leadership back to preferred replicas that often (see
	// leaderImbalance). 0 never does so on its own (ElectPreferredLeaders
	// still does on request).
	LeaderImbalanceCheckInterval time.Duration
	// LeaderImbalancePercentage is Kafka's
	// leader.imbalance.per.broker.percentage, 0..100: a broker's preferred
	// partitions are given back to it once more than this share of them is
	// led by others.
	LeaderImbalancePercentage int
	// UncleanLeaderElection is this node's static
	// unclean.leader.election.enable: while it is the controller, the
	// default for topics that do not set it, below the dynamic broker
	// configs (see uncleanElectionEnabled).
	UncleanLeaderElection bool
}

// Validate reports the first invalid option.
func (o Options) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("metadata: Options.Dir is required")
	case o.NodeID < 0:
		return fmt.Errorf("metadata: Options.NodeID %d is negative", o.NodeID)
	case o.Clock == nil:
		return errors.New("metadata: Options.Clock is required")
	case o.BrokerSessionTimeout < 0:
		return fmt.Errorf("metadata: Options.BrokerSessionTimeout %v is negative", o.BrokerSessionTimeout)
	case o.LeaderImbalanceCheckInterval < 0:
		return fmt.Errorf("metadata: Options.LeaderImbalanceCheckInterval %v is negative", o.LeaderImbalanceCheckInterval)
	case o.LeaderImbalancePercentage < 0 || o.LeaderImbalancePercentage > 100:
		return fmt.Errorf("metadata: Options.LeaderImbalancePercentage %d is not in 0..100", o.LeaderImbalancePercentage)
	case o.ClusterID != "" && ValidClusterID(o.ClusterID) != nil:
		return fmt.Errorf("metadata: Options.ClusterID: %w", ValidClusterID(o.ClusterID))
	}
	return o.validateQuorum()
}

// Store is the metadata quorum member on this node: Raft plus the FSM that
// publishes Images. Safe for concurrent use.
type Store struct {
	opts   Options
	log    *slog.Logger
	fsm    *fsm
	raft   *raft.Raft
	wal    *raftwal.WAL
	meta   *metadb.BoltMetaDB
	trans  raft.Transport
	mux    *muxListener  // the TCP listener of Raft and forwarding; nil in memory
	stopCh chan struct{} // closed by Close: stops the leader and join loops
	// closeCtx is canceled by Close, with stopCh: it ends forwarding I/O.
	closeCtx    context.Context
	closeCancel context.CancelFunc
	loopWG      sync.WaitGroup
	ready       chan struct{} // closed once this node has taken office as controller
	readyO      sync.Once
	// started is set once raft is; the forward server may run before.
	started atomic.Bool
	// deciding: this voter has no Raft state and is probing the others
	// (rejoin.go); it answers their probes as a node without history.
	deciding atomic.Bool
	// gate withholds this voter's votes while it rejoins (rejoin.go); nil
	// when it did not start rejoining. Set before Raft starts.
	gate *voteGate
	// inOffice: this node leads and has taken office in its current term.
	inOffice atomic.Bool
	// uncleanElections counts the leaders this node, as controller,
	// elected outside the ISR on its own (UncleanElections).
	uncleanElections atomic.Uint64
	// hb is the controller's record of broker heartbeats in its term.
	hb heartbeatBook
	// configMu serializes this controller's Raft configuration changes,
	// so that each is planned against the configuration the one before it
	// left: hashicorp/raft's GetConfiguration reports no index that a
	// change could be conditioned on (its Index is always 0).
	configMu sync.Mutex
	// forwardSlots bounds the forwarding connections served at once.
	forwardSlots chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Open starts the quorum member. On a directory without Raft state it
// bootstraps a one-voter configuration, or with Options.Voters the voter
// configuration on a voter (a non-voter asks the leader to add it). A single
// node returns once it leads, the log is replayed into the FSM and the
// cluster id is set. A member of a multi-node quorum returns once it has
// taken office as leader, or once a leader is known and this node's image
// holds the cluster id and that leader's controller record. If ctx ends
// first, Open tears everything down and returns ctx's error.
func Open(ctx context.Context, o Options) (*Store, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{
		opts:         o,
		log:          o.Logger.With("component", "metadata", "node", o.NodeID),
		fsm:          newFSM(),
		stopCh:       make(chan struct{}),
		ready:        make(chan struct{}),
		forwardSlots: make(chan struct{}, maxForwardConns),
	}
	s.closeCtx, s.closeCancel = context.WithCancel(context.Background())
	start := o.Clock.Now()
	if err := s.start(ctx); err != nil {
		_ = s.Close() // the start error is the one worth reporting
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	img := s.Image()
	leader, _ := s.Leader()
	s.log.Info("metadata quorum ready", "cluster_id", img.ClusterID, "version", img.Version,
		"topics", len(img.Topics), "leader", leader, "took", o.Clock.Now().Sub(start))
	s.warnStaleVoters()
	return s, nil
}

// start opens the stores and the transport and starts Raft. On error the
// caller runs Close, which releases whatever was opened. ctx bounds how
// long a voter without state waits for the others to answer (rejoin.go).
func (s *Store) start(ctx context.Context) error {
	o := s.opts
	hlog := newRaftLogger(s.log)
	wal, meta, err := openRaftWAL(filepath.Join(o.Dir, "wal"), hlog)
	s.meta = meta
	if err != nil {
		return err
	}
	s.wal = wal
	snaps, err := raft.NewFileSnapshotStoreWithLogger(o.Dir, snapshotsRetained, hlog)
	if err != nil {
		return fmt.Errorf("metadata: open snapshot store: %w", err)
	}
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(strconv.Itoa(int(o.NodeID)))
	conf.Logger = hlog
	// A leader that RemoveVoter demotes stays up as a non-voter: the
	// node goes on as a broker and replicates the metadata.
	conf.ShutdownOnRemove = false
	if o.BindAddr == "" {
		_, s.trans = raft.NewInmemTransport(raft.ServerAddress("inmem-metadata-" + string(conf.LocalID)))
		// Nothing to wait for across a network: elect quickly.
		conf.HeartbeatTimeout = 100 * time.Millisecond
		conf.ElectionTimeout = 100 * time.Millisecond
		conf.LeaderLeaseTimeout = 50 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
	} else {
		mux, err := newMuxListener(o.BindAddr, o.advertised(), s.log, s.serveForward, o.KafkaConns)
		if err != nil {
			return err
		}
		s.mux = mux
		s.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: mux, MaxPool: tcpMaxPool, Timeout: tcpTimeout, Logger: hlog,
		})
	}
	if err := raft.ValidateConfig(conf); err != nil {
		return fmt.Errorf("metadata: raft config: %w", err)
	}
	existing, err := raft.HasExistingState(wal, wal, snaps)
	if err != nil {
		return fmt.Errorf("metadata: inspect raft state: %w", err)
	}
	if err := o.checkQuorumMode(existing); err != nil {
		return err
	}
	rejoin, err := s.mustRejoin(ctx, existing)
	if err != nil {
		return err
	}
	if rejoin {
		s.gate = newVoteGate(s.trans)
		s.trans = s.gate
		if o.isVoter() {
			s.log.Warn("this voter has no record of the metadata quorum's history (a new disk or data dir?): it catches up without a vote, and votes again once it holds what the quorum has committed")
		}
	} else if boot, ok := s.bootstrapConfiguration(); ok && !existing {
		if err := raft.BootstrapCluster(conf, wal, wal, snaps, s.trans, boot); err != nil {
			return fmt.Errorf("metadata: bootstrap: %w", err)
		}
		s.log.Info("bootstrapped metadata quorum", "voters", len(boot.Servers), "addr", s.trans.LocalAddr())
	}
	r, err := raft.NewRaft(conf, s.fsm, wal, wal, snaps, s.trans)
	if err != nil {
		return fmt.Errorf("metadata: start raft: %w", err)
	}
	s.raft = r
	s.started.Store(true)
	s.loopWG.Add(1)
	go s.leaderLoop(r.LeaderCh())
	if s.gate != nil {
		s.loopWG.Add(1)
		go s.rejoinLoop()
	}
	// A configured voter with state runs it too, in case it came back at
	// another address (or is taken out while it runs).
	if o.clustered() && (!o.isVoter() || existing) {
		s.loopWG.Add(1)
		go s.joinLoop()
	}
	return nil
}

// leaderLoop runs the duties of a new leader each time this node wins an
// election. It is owned by the Store and stops when Close closes stopCh.
func (s *Store) leaderLoop(leaderCh <-chan bool) {
	defer s.loopWG.Done()
	for {
		select {
		case <-s.stopCh:
			return
		case isLeader := <-leaderCh:
			s.inOffice.Store(false)
			if !isLeader {
				s.log.Warn("lost metadata leadership")
				continue
			}
			if !s.takeOfficeWhileLeader() {
				continue
			}
			term := s.hb.startTerm(s.nowMs())
			s.inOffice.Store(true)
			if s.opts.BrokerSessionTimeout > 0 {
				s.loopWG.Add(1)
				go s.livenessLoop(term)
			}
			if s.opts.LeaderImbalanceCheckInterval > 0 {
				s.loopWG.Add(1)
				go s.leaderBalanceLoop(term)
			}
			s.loopWG.Add(1)
			go s.uncleanElectionLoop(term)
			s.readyO.Do(func() { close(s.ready) })
		}
	}
}

// takeOfficeWhileLeader runs takeOffice until it succeeds, or this node no
// longer leads (a false on LeaderCh follows), or Close. A leader that stayed
// out of office would never act as controller, and followers would wait for
// its controller record forever.
func (s *Store) takeOfficeWhileLeader() bool {
	for {
		err := s.takeOffice()
		if err == nil {
			return true
		}
		s.log.Warn("taking office as controller failed", "err", err)
		if s.raft.State() != raft.Leader {
			return false
		}
		retry := time.NewTimer(takeOfficeRetry)
		select {
		case <-s.stopCh:
			retry.Stop()
			return false
		case <-retry.C:
		}
	}
}

// takeOffice waits until every earlier entry is applied, sets the cluster id
// if the log has none yet (a fresh log, or a crash right after bootstrap), and
// records this node as controller.
func (s *Store) takeOffice() error {
	if _, err := s.await(context.Background(), s.raft.Barrier(barrierTimeout)); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	if err := s.correctOwnAddress(); err != nil {
		return err
	}
	if s.Image().ClusterID == "" {
		id := s.opts.ClusterID
		if id == "" {
			id = newClusterID()
		}
		if _, err := s.proposeNoCtx(&initClusterCmd{ClusterID: id}); err != nil {
			return fmt.Errorf("set cluster id: %w", err)
		}
	}
	if _, err := s.proposeNoCtx(&controllerChangeCmd{NodeID: s.opts.NodeID}); err != nil {
		return fmt.Errorf("record controller: %w", err)
	}
	return nil
}

// correctOwnAddress makes the leader's entry in the Raft configuration name
// its transport's address: a single node grown into a cluster's first voter
// (quorum_mode.go) comes with the in-memory address it had alone, which no
// other node could reach in an election.
func (s *Store) correctOwnAddress() error {
	if !s.opts.clustered() {
		return nil
	}
	s.configMu.Lock()
	defer s.configMu.Unlock()
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return fmt.Errorf("reading the raft configuration: %w", err)
	}
	id, addr := nodeServerID(s.opts.NodeID), s.trans.LocalAddr()
	for _, srv := range cf.Configuration().Servers {
		if srv.ID != id || srv.Suffrage != raft.Voter || srv.Address == addr {
			continue
		}
		if _, err := s.await(context.Background(), s.raft.AddVoter(id, addr, 0, barrierTimeout)); err != nil {
			return fmt.Errorf("correcting this voter's address from %s to %s: %w", srv.Address, addr, err)
		}
		s.log.Info("this voter's address in the metadata quorum is now its controller listener", "was", srv.Address, "addr", addr)
	}
	return nil
}

// Image returns the current image; never nil. Do not mutate it.
func (s *Store) Image() *Image { return s.fsm.image.Load() }

// Watch returns a channel that receives a signal after each new image, and a
// function that stops the signals. Signals coalesce: after a signal, read
// Image() for the latest state. The channel is never closed, not even by Close.
func (s *Store) Watch() (<-chan struct{}, func()) { return s.fsm.watchers.add() }

// Close shuts Raft down, closes the transport and the stores, and waits for
// the Store's goroutines. It is idempotent; later calls return the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stopCh)
		s.closeCancel()
		var errs []error
		if s.raft != nil {
			// Shutdown also closes the transport and fails pending futures.
			errs = append(errs, s.raft.Shutdown().Error())
		} else if c, ok := s.trans.(raft.WithClose); ok {
			errs = append(errs, c.Close())
		}
		if s.mux != nil {
			// The transport closed it already; this waits for the forward
			// server's goroutines even if it did not.
			_ = s.mux.Close()
		}
		s.loopWG.Wait()
		if s.wal != nil {
			errs = append(errs, s.wal.Close())
		}
		if s.meta != nil {
			errs = append(errs, s.meta.Close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
