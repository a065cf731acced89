package metadata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
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
)

// Options configure a Store. The zero value is invalid; see Validate.
type Options struct {
	// Dir holds the Raft log (raft-wal, in Dir/wal) and snapshots (Dir/snapshots).
	Dir string
	// NodeID is this node's id, also its Raft server id. Must be ≥ 0.
	NodeID int32
	// BindAddr is the Raft TCP transport address (host:port; port 0 picks one).
	// "" selects an in-memory transport that reaches no other node: only for a
	// single-node quorum and tests, with short Raft timeouts.
	BindAddr string
	// Clock is the time seam (used for reporting; Raft keeps its own timers).
	Clock clock.Clock
	// Logger receives Store events and Raft's warnings and errors. nil discards.
	Logger *slog.Logger
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
	}
	return nil
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
	stopCh chan struct{} // closed by Close: stops the leader loop
	loopWG sync.WaitGroup
	ready  chan struct{} // closed once this node has taken office as controller
	readyO sync.Once

	closeOnce sync.Once
	closeErr  error
}

// Open starts the quorum member. On a directory without Raft state it
// bootstraps a one-voter configuration. It returns once this node leads, the
// log is replayed into the FSM and the cluster id is set, or with ctx's error
// (after tearing everything down) if ctx ends first.
func Open(ctx context.Context, o Options) (*Store, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{
		opts:   o,
		log:    o.Logger.With("component", "metadata", "node", o.NodeID),
		fsm:    newFSM(),
		stopCh: make(chan struct{}),
		ready:  make(chan struct{}),
	}
	start := o.Clock.Now()
	if err := s.start(); err != nil {
		_ = s.Close() // the start error is the one worth reporting
		return nil, err
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		_ = s.Close()
		return nil, fmt.Errorf("metadata: waiting for leadership: %w", ctx.Err())
	}
	img := s.Image()
	s.log.Info("metadata quorum ready", "cluster_id", img.ClusterID, "version", img.Version,
		"topics", len(img.Topics), "took", o.Clock.Now().Sub(start))
	return s, nil
}

// start opens the stores and the transport and starts Raft. On error the
// caller runs Close, which releases whatever was opened.
func (s *Store) start() error {
	o := s.opts
	hlog := hclog.FromStandardLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn})
	walDir := filepath.Join(o.Dir, "wal")
	if err := os.MkdirAll(walDir, 0o755); err != nil {
		return fmt.Errorf("metadata: create %s: %w", walDir, err)
	}
	// We own the meta store because WAL.Close leaves it (and its file lock) open,
	// which would block the next Open in this process.
	s.meta = &metadb.BoltMetaDB{}
	wal, err := raftwal.Open(walDir, raftwal.WithMetaStore(s.meta), raftwal.WithLogger(hlog))
	if err != nil {
		return fmt.Errorf("metadata: open raft wal: %w", err)
	}
	s.wal = wal
	snaps, err := raft.NewFileSnapshotStoreWithLogger(o.Dir, snapshotsRetained, hlog)
	if err != nil {
		return fmt.Errorf("metadata: open snapshot store: %w", err)
	}
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(strconv.Itoa(int(o.NodeID)))
	conf.Logger = hlog
	if o.BindAddr == "" {
		_, s.trans = raft.NewInmemTransport(raft.ServerAddress("inmem-metadata-" + string(conf.LocalID)))
		// Nothing to wait for across a network: elect quickly.
		conf.HeartbeatTimeout = 100 * time.Millisecond
		conf.ElectionTimeout = 100 * time.Millisecond
		conf.LeaderLeaseTimeout = 50 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
	} else {
		tcp, err := raft.NewTCPTransportWithLogger(o.BindAddr, nil, tcpMaxPool, tcpTimeout, hlog)
		if err != nil {
			return fmt.Errorf("metadata: raft transport on %s: %w", o.BindAddr, err)
		}
		s.trans = tcp
	}
	if err := raft.ValidateConfig(conf); err != nil {
		return fmt.Errorf("metadata: raft config: %w", err)
	}
	existing, err := raft.HasExistingState(wal, wal, snaps)
	if err != nil {
		return fmt.Errorf("metadata: inspect raft state: %w", err)
	}
	if !existing {
		boot := raft.Configuration{Servers: []raft.Server{
			{Suffrage: raft.Voter, ID: conf.LocalID, Address: s.trans.LocalAddr()},
		}}
		if err := raft.BootstrapCluster(conf, wal, wal, snaps, s.trans, boot); err != nil {
			return fmt.Errorf("metadata: bootstrap: %w", err)
		}
		s.log.Info("bootstrapped one-voter metadata quorum", "addr", s.trans.LocalAddr())
	}
	r, err := raft.NewRaft(conf, s.fsm, wal, wal, snaps, s.trans)
	if err != nil {
		return fmt.Errorf("metadata: start raft: %w", err)
	}
	s.raft = r
	s.loopWG.Add(1)
	go s.leaderLoop(r.LeaderCh())
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
			if !isLeader {
				s.log.Warn("lost metadata leadership")
				continue
			}
			if err := s.takeOffice(); err != nil {
				s.log.Warn("taking office as controller failed", "err", err)
				continue
			}
			s.readyO.Do(func() { close(s.ready) })
		}
	}
}

// takeOffice waits until every earlier entry is applied, sets the cluster id
// if the log has none yet (a fresh log, or a crash right after bootstrap), and
// records this node as controller.
func (s *Store) takeOffice() error {
	if err := s.raft.Barrier(barrierTimeout).Error(); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	if s.Image().ClusterID == "" {
		if _, err := s.proposeNoCtx(&initClusterCmd{ClusterID: newClusterID()}); err != nil {
			return fmt.Errorf("set cluster id: %w", err)
		}
	}
	if _, err := s.proposeNoCtx(&controllerChangeCmd{NodeID: s.opts.NodeID}); err != nil {
		return fmt.Errorf("record controller: %w", err)
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
		var errs []error
		if s.raft != nil {
			// Shutdown also closes the transport and fails pending futures.
			errs = append(errs, s.raft.Shutdown().Error())
		} else if c, ok := s.trans.(raft.WithClose); ok {
			errs = append(errs, c.Close())
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
