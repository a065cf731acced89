package partition

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/vfs"
)

// ErrOffsetOutOfRange means a read asked for an offset outside
// [logStart, highWatermark].
var ErrOffsetOutOfRange = errors.New("partition: offset out of range")

// ErrClosed means the partition was closed (its topic deleted or the broker
// stopping).
var ErrClosed = errors.New("partition: closed")

// Partition owns one partition's log and state. Safe for concurrent use.
type Partition struct {
	opts   Options
	log    *log.Log
	logger *slog.Logger

	// leading mirrors mu.role == roleLeader for IsLeader, which the
	// request paths call per partition without taking mu; it is written
	// only with mu held, together with mu.role (setRoleLocked).
	leading atomic.Bool

	// snapFiles orders the writing and pruning of producer snapshot files,
	// which happen without mu so that their fsyncs do not stall appends.
	snapFiles sync.Mutex
	// txnIndex writes the aborted-transaction index file, also without mu
	// (aborted_index.go).
	txnIndex abortedIndex

	// cleanerCheckpoint orders the cleaner's writes of its checkpoint
	// against a truncation's, so that a pass that a truncation overtook
	// never records as clean what the truncation removed (truncate.go).
	cleanerCheckpoint sync.Mutex

	mu struct {
		sync.Mutex
		cfg           Config
		logStart      base.Offset
		highWatermark base.Offset
		// hwFromRestart: the high watermark is the one taken at open
		// (restartHighWatermark), not yet confirmed by a leader
		// (SetHighWatermarkFromLeader) or by followers
		// (AdvanceHighWatermark). A follower dropping records above a true
		// high watermark is an unclean election; above this one, only
		// records written before the restart that never committed.
		hwFromRestart bool
		epochs        epochCache
		// epochsUnsaved: the last write of epochs failed
		// (writeEpochsLocked), so the checkpoint may lack a change.
		epochsUnsaved bool
		// role is leader or follower (role.go); leaderEpoch is the leader
		// epoch the partition was last told (BecomeLeader,
		// BecomeFollower), at least the cache's latest.
		role        role
		leaderEpoch base.Epoch
		// inSync is a leader's in-sync replica count, itself included, as
		// the replication layer last told it (SetInSyncReplicas); 1 at
		// Open, 0 (unknown: no acks=all append) for a follower and for a
		// leader that was one until it is told. With exactly 1, appends
		// move the high watermark to the log end; otherwise only
		// AdvanceHighWatermark moves it.
		inSync int
		// truncations counts TruncateTo and TruncateFullyAndStartAt calls,
		// so that a producer snapshot or a cleaner checkpoint decided
		// before one is not written after it.
		truncations uint64
		producers   *producers.State
		// aborted are the aborted transactions whose marker is at or
		// after the log start, ascending by LastOffset (marker order);
		// abortedNext numbers the next one to join (aborted_index.go).
		aborted     []AbortedTxn
		abortedNext uint64
		// verifying is each producer's verification guard, lastGuard the
		// last one handed out (verification.go).
		verifying     map[base.ProducerID]VerificationGuard
		lastGuard     VerificationGuard
		unflushedMsgs int64
		// oldestUnflushedAt is when the oldest unflushed message arrived
		// (flush.ms counts from it).
		oldestUnflushedAt time.Time
		active            activeEstimate
		// changed is closed and replaced on every append, so long-poll
		// fetches can wait without polling; after Close it stays closed.
		changed chan struct{}
		closed  bool
	}
}

// Open opens (or creates) the partition in opts.Dir, recovering its log.
func Open(opts Options) (*Partition, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := vfs.MkdirAllSynced(vfs.Default, opts.Dir); err != nil {
		return nil, fmt.Errorf("partition %v: %w", opts.TP, err)
	}
	openedAt := opts.Clock.Now() // no later than the log's segment.ms start
	logger := cmp.Or(opts.Logger, slog.Default()).With("partition", opts.TP.String())
	lo := logOptions(opts)
	lo.OnFail = logFailureReporter(logger, opts.OnLogFailure) // fixed at Open
	lo.OnSync = opts.OnLogSync
	l, err := log.Open(lo)
	if err != nil {
		return nil, fmt.Errorf("partition %v: %w", opts.TP, err)
	}
	p := &Partition{opts: opts, log: l, logger: logger}
	p.resetActiveLocked(openedAt)
	if err := p.load(); err != nil {
		l.Close()
		return nil, fmt.Errorf("partition %v: %w", opts.TP, err)
	}
	return p, nil
}

func logOptions(opts Options) log.Options {
	c := opts.Config
	return log.Options{
		Dir:                opts.Dir,
		SegmentBytes:       c.SegmentBytes,
		SegmentMaxAge:      c.SegmentMaxAge,
		IndexIntervalBytes: c.IndexIntervalBytes,
		SegmentIndexBytes:  c.SegmentIndexBytes,
		Clock:              opts.Clock,
		ZeroFill:           true,
	}
}

// load restores the offsets, epochs and producer state after the log opened.
func (p *Partition) load() error {
	if err := p.recoverTierStart(); err != nil {
		return err
	}
	p.mu.cfg = p.opts.Config
	p.mu.changed = make(chan struct{})
	start, err := readLogStart(p.opts.Dir)
	if err != nil {
		return err
	}
	p.mu.logStart = max(start, p.log.Start())
	if p.opts.Config.Tiered && start < p.log.Start() {
		// The offsets below the local log start are in the remote tier.
		p.mu.logStart = start
	}
	if p.mu.logStart > p.log.End() {
		p.mu.logStart = p.log.End()
	}
	p.mu.highWatermark, p.mu.hwFromRestart = restartHighWatermark(p.opts.CheckpointedHighWatermark, p.mu.logStart, p.log.Start(), p.log.End()), true
	epochs, err := loadEpochCache(p.opts.Dir)
	if err != nil {
		return err
	}
	epochs.truncateFrom(p.log.End())
	p.mu.epochs = epochs
	// A crash after a new log start was persisted but before the trimmed
	// cache was (applyDecisionLocked) leaves epochs below the log start;
	// trim them now, as Kafka's LogLoader does (truncateFromStart).
	if err := p.saveEpochsLocked(p.mu.epochs.truncateBefore(p.mu.logStart)); err != nil {
		return err
	}
	// A reopened partition leads, as before replication: the broker makes
	// it a follower if metadata says so.
	p.setRoleLocked(roleLeader)
	p.mu.inSync = 1
	if err := p.becomeLeaderLocked(p.opts.LeaderEpoch); err != nil {
		return err
	}
	p.mu.leaderEpoch = max(p.opts.LeaderEpoch, p.mu.epochs.latestEpoch())
	return p.loadProducers()
}

// TP is the partition's name.
func (p *Partition) TP() base.TopicPartition { return p.opts.TP }

// TopicID is the id of the partition's topic.
func (p *Partition) TopicID() base.TopicID { return p.opts.TopicID }

// Offsets is a consistent view of a partition's offsets;
// LastStable <= HighWatermark <= LogEnd.
type Offsets struct {
	LogStart      base.Offset
	LocalStart    base.Offset
	HighWatermark base.Offset
	LogEnd        base.Offset
	// LeaderEpoch is the partition's current leader epoch, as BecomeLeader
	// or BecomeFollower last set it: a leader's is its own, a follower's
	// its leader's (which its log may hold no batch of yet; LatestEpoch is
	// the log's).
	LeaderEpoch base.Epoch
	// LastStable is the last stable offset (exclusive): the first offset
	// of the oldest open transaction, at least LogStart, at most
	// HighWatermark; HighWatermark when no transaction is open. A
	// read_committed consumer reads below it.
	LastStable base.Offset
	// RestartHW says HighWatermark is the one taken at open, which no
	// leader has confirmed yet (nor followers moved, on a leader). A
	// follower's may count records that never committed, when no
	// checkpoint had one (restartHighWatermark).
	RestartHW bool
}

// Offsets returns the partition's current offsets.
func (p *Partition) Offsets() Offsets {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.offsetsLocked()
}

func (p *Partition) offsetsLocked() Offsets {
	return Offsets{
		LogStart:      p.mu.logStart,
		LocalStart:    p.log.Start(),
		HighWatermark: p.mu.highWatermark,
		LogEnd:        p.log.End(),
		LeaderEpoch:   p.mu.leaderEpoch,
		LastStable:    p.mu.producers.LastStable(p.mu.logStart, p.mu.highWatermark),
		RestartHW:     p.mu.hwFromRestart,
	}
}

// DurableEnd is the offset below which the log has been fdatasynced here:
// what a power loss now would leave of it.
func (p *Partition) DurableEnd() base.Offset { return p.log.DurableEnd() }

// SetConfig applies a changed topic configuration. Segment sizes apply from
// the next append. A configuration the log refuses changes nothing.
func (p *Partition) SetConfig(c Config) error {
	defer p.compactAbortedIndexLogged() // after the unlock
	p.mu.Lock()
	defer p.mu.Unlock()
	probe := p.opts
	probe.Config = c
	if err := probe.Validate(); err != nil {
		return err
	}
	if err := p.log.SetOptions(logOptions(probe)); err != nil {
		return fmt.Errorf("partition %v: %w", p.opts.TP, err)
	}
	if p.mu.cfg.Tiered && !c.Tiered {
		// Tiering turned off (remote.log.delete.on.disable, KIP-950): the
		// remote prefix is being deleted, so it is no longer readable.
		if start := p.log.Start(); start > p.mu.logStart {
			p.logger.Info("tiering turned off: the log start moves to the local log start", "from", p.mu.logStart, "to", start)
			if err := p.applyDecisionLocked(retention.Decision{NewLogStart: start}, 0); err != nil {
				return fmt.Errorf("partition %v: %w", p.opts.TP, err)
			}
		}
	}
	p.mu.cfg = c
	return nil
}

// Changed returns a channel closed at the next append (or close).
func (p *Partition) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.changed
}

func (p *Partition) notifyLocked() {
	close(p.mu.changed)
	p.mu.changed = make(chan struct{})
}

// SizeBytes is the total size of the local log.
func (p *Partition) SizeBytes() int64 {
	var n int64
	for _, s := range p.log.Segments() {
		n += s.SizeBytes
	}
	return n
}

// Close syncs the log, marks a clean shutdown and snapshots producer state
// at the log end, so that the next Open replays nothing.
func (p *Partition) Close() error {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil
	}
	p.mu.closed = true
	close(p.mu.changed)
	// No append can follow, so the state is the state at the log end.
	snap := p.producerSnapshotLocked(p.log.End())
	p.mu.Unlock()
	// The log first: a snapshot written after its data is durable is never
	// discarded by the next Open as describing a lost tail.
	if err := p.log.Close(); err != nil {
		p.closeAbortedIndex()
		return err
	}
	err := p.writeSnapshot(*snap)
	p.closeAbortedIndex()
	return err
}

// Delete closes the partition and removes its directory. Nothing is made
// durable first (no data or index sync, no producer snapshot), as Kafka
// only closes a deleted log's files: a large unsynced tail would otherwise
// be written out just to be removed, holding up every other partition's
// syncs on the disk. A crash before the removal leaves the directory, which
// the next start removes with the topic.
func (p *Partition) Delete() error {
	p.mu.Lock()
	if !p.mu.closed {
		p.mu.closed = true
		close(p.mu.changed)
	}
	p.mu.Unlock()
	p.log.Discard()
	p.closeAbortedIndex()
	return vfs.RemoveDir(p.opts.Dir)
}
