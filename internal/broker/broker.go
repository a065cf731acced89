package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/vfs"
)

// ConfigResolver turns what a topic's config is made of into what a
// partition needs, applying broker defaults. cmd injects it, so the broker
// does not know config names.
type ConfigResolver func(ConfigSources) (partition.Config, error)

// Options builds a Broker.
type Options struct {
	DataDir string
	NodeID  int32
	// Meta is the metadata quorum (a *metadata.Store).
	Meta              Metadata
	Resolve           ConfigResolver
	RetentionInterval time.Duration // log.retention.check.interval.ms
	// FlushCheckInterval is how often partitions are checked for data
	// older than their flush.ms (log.flush.scheduler.interval.ms).
	FlushCheckInterval time.Duration
	// HWCheckpointInterval is how often the high watermark checkpoint is
	// written (replica.high.watermark.checkpoint.interval.ms); zero is
	// Kafka's default, 5 s.
	HWCheckpointInterval time.Duration
	Clock                clock.Clock
	Logger               *slog.Logger
	// OnOpen and OnClose, when set, hear about each hosted partition
	// that this node begins to lead (opened as the leader, or a follower
	// made leader) and each one it stops leading (made a follower, or
	// about to be closed or deleted): every OnOpen is followed by exactly
	// one OnClose, before the partition follows, closes or is deleted. A
	// partition hosted as a follower is never announced. They run under
	// the broker's lock, so they must not call the Broker; cmd uses them
	// to start and resign coordinator partitions, which only a leader
	// serves.
	OnOpen  func(*partition.Partition)
	OnClose func(*partition.Partition)
	// OnLogFailure, when set, hears of each hosted partition whose log
	// fails on an I/O error (a full disk, a failed fsync): from then on it
	// refuses writes until the node restarts. It runs under the
	// partition's log lock: it must not call the Broker or the partition.
	OnLogFailure func(base.TopicPartition, error)
	// OnLogSync, when set, hears how long each fdatasync round of a
	// hosted partition's log took, from the goroutine that ran it.
	OnLogSync func(time.Duration)
	// ReopenFailedLogs makes the broker reopen a partition whose log
	// failed because the disk was full, or the process out of file
	// descriptors, once that has passed (mayReopen), instead of refusing
	// its writes until a restart: for a single node. A cluster node leaves
	// instead (see OnLogFailure).
	ReopenFailedLogs bool
	// Followers, when set, is told which hosted partitions follow which
	// leader (replication's fetchers); nil tells nobody, which is right
	// for a single node, where no partition has a follower.
	Followers Followers
	// ReplicaLagTimeMax is replica.lag.time.max.ms: a follower that has
	// not caught up with its leader's log end for this long leaves the
	// ISR. The ISR shrink check runs every half of it.
	ReplicaLagTimeMax time.Duration
	// Tier, when set, runs the tier loop of every partition of a topic
	// with remote.storage.enable; nil means tiering is off.
	Tier *TierDeps
	// Cleaner, when set, runs the log cleaner over compacted topics; nil
	// means log.cleaner.enable=false.
	Cleaner *CleanerOptions
	// Rand draws in [0, 1), once per partition opened, the share of
	// segment.jitter.ms it rolls early by; nil is math/rand/v2's Float64.
	// With OpenWorkers above 1 it is called concurrently.
	Rand func() float64
	// OpenWorkers is how many partitions Reconcile opens at once, each
	// recovering its log if it was not closed cleanly
	// (num.recovery.threads.per.data.dir); 0 or 1 opens them one at a
	// time.
	OpenWorkers int
}

// Validate reports the first unusable option.
func (o Options) Validate() error {
	switch {
	case o.DataDir == "":
		return errors.New("broker: DataDir is required")
	case o.Meta == nil:
		return errors.New("broker: Meta is required")
	case o.Resolve == nil:
		return errors.New("broker: Resolve is required")
	case o.Clock == nil:
		return errors.New("broker: Clock is required")
	case o.RetentionInterval <= 0:
		return errors.New("broker: RetentionInterval must be positive")
	case o.FlushCheckInterval <= 0:
		return errors.New("broker: FlushCheckInterval must be positive")
	case o.HWCheckpointInterval < 0:
		return errors.New("broker: HWCheckpointInterval is negative")
	case o.ReplicaLagTimeMax < 2*time.Millisecond:
		return errors.New("broker: ReplicaLagTimeMax must be at least 2 ms")
	case o.Tier != nil:
		if err := o.Tier.Validate(); err != nil {
			return err
		}
	}
	if o.Cleaner != nil {
		return o.Cleaner.Validate()
	}
	return nil
}

// Broker hosts this node's partitions.
type Broker struct {
	opts   Options
	logger *slog.Logger
	pids   *producerIDs
	// viewCache holds the remote segment views of the current image.
	viewCache viewCache
	// cleaner is what the log cleaner last did and which partitions it
	// gave up on.
	cleaner cleanerState
	// cleaners runs the cleaner's threads (cleaner_pool.go).
	cleaners cleanerPool
	// listOffsetsTimeout is Tier.ListOffsetsTimeout as last set
	// (SetRemoteListOffsetsTimeout), in nanoseconds.
	listOffsetsTimeout atomic.Int64

	// hosting is held while partitions are opened, deleted or reopened
	// (Reconcile, reopenFailedLogs) and while Close closes them, so that
	// their file work can leave mu; it is taken before mu.
	hosting sync.Mutex
	mu      struct {
		sync.Mutex
		parts   map[base.TopicPartition]*hosted
		version uint64 // image version last reconciled
		closed  bool
		// reopening holds the partitions closed to reopen their failed
		// logs and not open again yet (reopenFailedLogs), with what they
		// had failed on.
		reopening map[base.TopicPartition]string
	}
	// hw is the high watermark checkpoint, read at start and written by
	// a loop and at Close.
	hw   *hwCheckpoint
	stop chan struct{}
	done sync.WaitGroup
	// async runs the ISR changes proposed to the controller.
	async asyncTasks
}

// hosted is one partition hosted here: this node is one of its replicas.
type hosted struct {
	p       *partition.Partition
	topicID base.TopicID
	configs ConfigSources
	tier    *tierLoop // running while the topic is tiered and led here
	jitter  float64   // its segment.jitter.ms draw (Config.WithSegmentJitter)
	// role is what the image last asked of this node for the partition:
	// roleLeader once announced with OnOpen, roleFollower otherwise; the
	// zero value is a partition just opened, not yet given a role.
	role replicaRole
	// following is the leader that Followers was last told this follower
	// follows (ok false: none, or it was told to stop).
	following followTarget
	// leader is the leader side of replication while this node leads a
	// partition with other replicas; nil otherwise.
	leader *leaderState
	// isr is the image's ISR as last applied while leading (nil while
	// following), so that SetInSyncReplicas follows its changes.
	isr []int32
}

// New opens the partitions the current image assigns here and starts the
// background loops. Close stops them.
func New(opts Options) (*Broker, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	if err := vfs.MkdirAllSynced(vfs.Default, opts.DataDir); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", opts.DataDir, err)
	}
	pids, err := openProducerIDs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	hw, err := openHWCheckpoint(opts.DataDir)
	if err != nil {
		opts.Logger.Warn("the high watermark checkpoint is unreadable: partitions start at their log ends, as without one", "err", err)
	}
	b := &Broker{opts: opts, logger: opts.Logger, pids: pids, hw: hw, stop: make(chan struct{})}
	pids.clusterBlock = b.clusterProducerIDBlock
	b.mu.parts = make(map[base.TopicPartition]*hosted)
	b.mu.reopening = make(map[base.TopicPartition]string)
	b.async.init()
	if err := b.Reconcile(); err != nil {
		b.closePartitions()
		return nil, err
	}
	if err := b.removeStrayDirs(); err != nil {
		b.closePartitions()
		return nil, err
	}
	b.startLoops()
	return b, nil
}

// Partition returns the partition hosted here, reconciling with the latest
// image first if it is not open yet (a topic created a moment ago).
func (b *Broker) Partition(tp base.TopicPartition) (*partition.Partition, bool) {
	b.mu.Lock()
	h, ok := b.mu.parts[tp]
	b.mu.Unlock()
	if ok {
		return h.p, true
	}
	if err := b.Reconcile(); err != nil {
		b.logger.Error("reconciling partitions", "err", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok = b.mu.parts[tp]
	if !ok {
		return nil, false
	}
	return h.p, true
}

// Partitions returns every hosted partition.
func (b *Broker) Partitions() []*partition.Partition {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*partition.Partition, 0, len(b.mu.parts))
	for _, h := range b.mu.parts {
		out = append(out, h.p)
	}
	return out
}

// NextProducerID hands out a producer id never handed out before by this
// broker, across restarts.
func (b *Broker) NextProducerID() (base.ProducerID, error) { return b.pids.next() }

// NodeID is this broker's id.
func (b *Broker) NodeID() int32 { return b.opts.NodeID }

// DataDir is the directory holding the partitions.
func (b *Broker) DataDir() string { return b.opts.DataDir }

// Close stops the loops and closes every partition cleanly.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return nil
	}
	b.mu.closed = true
	b.mu.Unlock()
	close(b.stop)
	b.async.close()
	b.done.Wait()
	b.checkpointHighWatermarks()
	return b.closePartitions()
}

func (b *Broker) closePartitions() error {
	b.hosting.Lock()
	defer b.hosting.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for tp, h := range b.mu.parts {
		b.closingLocked(h)
		if err := h.p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %v: %w", tp, err))
		}
		delete(b.mu.parts, tp)
	}
	return errors.Join(errs...)
}

// closingLocked stops h's fetching (a follower) or its tier loop and
// leader state (a leader, whose OnClose hears that it is about to close
// or be deleted), and drops its tier counts.
func (b *Broker) closingLocked(h *hosted) {
	b.unfollowLocked(h)
	b.resignLocked(h)
	b.forgetTierStatsLocked(h.p.TP())
}
