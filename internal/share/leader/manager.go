package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/share"
)

// Key names a share-partition: one share group's view of one partition.
type Key struct {
	Group     string
	Topic     base.TopicID
	Partition int32
}

func (k Key) String() string { return fmt.Sprintf("%s:%x:%d", k.Group, k.Topic[:4], k.Partition) }

// Stored is a share-partition's state as the share coordinator keeps it.
// HasStart is false for state initialized without a start offset.
type Stored struct {
	StateEpoch int32
	HasStart   bool
	State      share.Persisted
}

// ErrFenced is a write or read that the share coordinator refused because
// it holds a later state epoch or leader epoch (FENCED_STATE_EPOCH,
// FENCED_LEADER_EPOCH): this leader's view is stale.
var ErrFenced = errors.New("share-partition state fenced by a later epoch")

// Persister is the share coordinator as a leader sees it.
type Persister interface {
	// Read is key's state, read by the leader of leaderEpoch; ok is false
	// when the coordinator holds none.
	Read(ctx context.Context, key Key, leaderEpoch int32) (st Stored, ok bool, err error)
	// Initialize creates key's state with a start offset.
	Initialize(ctx context.Context, key Key, stateEpoch int32, start base.Offset) error
	// Write replaces key's in-flight state; completed is how many offsets
	// past the start are delivered for good.
	Write(ctx context.Context, key Key, stateEpoch, leaderEpoch int32, state share.Persisted, completed int64) error
}

// Bounds are the partition's offsets and leadership as the request that
// uses a share-partition sees them. ReadEnd is where the group reads up
// to: the high watermark, or the last stable offset under read_committed.
type Bounds struct {
	LogStart      base.Offset
	HighWatermark base.Offset
	ReadEnd       base.Offset
	LeaderEpoch   int32
}

// Read is what the caller's read of the log returned: its batches, and the
// ranges among them of aborted transactions' records, which a
// read_committed group archives instead of delivering (nil otherwise).
type Read struct {
	share.Read
	Aborted []base.Range
}

// Settings are the share group's settings for one operation.
type Settings struct {
	Limits share.Limits
	// Reset is where a share-partition without state starts, by the
	// group's share.auto.offset.reset (the high watermark for latest, the
	// log start for earliest, the first record of a time for by_duration);
	// nil starts at the high watermark.
	Reset func(Bounds) (base.Offset, error)
}

// Options are a Manager's environment.
type Options struct {
	Persister Persister
	Clock     clock.Clock
	// ExpiryInterval is how often Run releases expired locks.
	ExpiryInterval time.Duration
	Logger         *slog.Logger
}

// Validate reports a missing or unusable option.
func (o Options) Validate() error {
	switch {
	case o.Persister == nil:
		return errors.New("leader: Options.Persister is nil")
	case o.Clock == nil:
		return errors.New("leader: Options.Clock is nil")
	case o.ExpiryInterval <= 0:
		return fmt.Errorf("leader: expiry interval %v is not positive", o.ExpiryInterval)
	case o.Logger == nil:
		return errors.New("leader: Options.Logger is nil")
	}
	return nil
}

// Manager holds the share-partitions used on this broker.
type Manager struct {
	opts Options
	mu   struct {
		sync.Mutex
		parts   map[Key]*entry
		changed chan struct{}
	}
}

// entry is one share-partition. Its mutex is held by each operation on it,
// across its persister calls. p is nil until loaded.
type entry struct {
	mu          sync.Mutex
	p           *share.Partition
	stateEpoch  int32
	leaderEpoch int32
	limits      share.Limits // the last operation's, for expiry
}

// New returns a Manager with no share-partitions.
func New(opts Options) (*Manager, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{opts: opts}
	m.mu.parts = map[Key]*entry{}
	m.mu.changed = make(chan struct{})
	return m, nil
}

// Changed is closed the next time records become available again.
func (m *Manager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.changed
}

func (m *Manager) signal() {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.mu.changed)
	m.mu.changed = make(chan struct{})
}

func (m *Manager) entryOf(key Key) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.mu.parts[key]
	if !ok {
		e = &entry{}
		m.mu.parts[key] = e
	}
	return e
}

// drop forgets e (fenced, or its partition is no longer led here), unless
// another entry replaced it already.
func (m *Manager) drop(key Key, e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.parts[key] == e {
		delete(m.mu.parts, key)
	}
}

// loaded is key's entry, locked and loaded at b's leader epoch; the caller
// unlocks it.
func (m *Manager) loaded(ctx context.Context, key Key, b Bounds, set Settings) (*entry, error) {
	e := m.entryOf(key)
	e.mu.Lock()
	if e.p != nil && e.leaderEpoch == b.LeaderEpoch {
		e.limits = set.Limits
		return e, nil
	}
	e.p = nil
	st, ok, err := m.opts.Persister.Read(ctx, key, b.LeaderEpoch)
	if err == nil && (!ok || !st.HasStart) {
		if err = m.initialize(ctx, key, st, ok, b, set); err == nil {
			st, ok, err = m.opts.Persister.Read(ctx, key, b.LeaderEpoch)
		}
		if err == nil && (!ok || !st.HasStart) {
			err = fmt.Errorf("%w: the share coordinator holds no start offset after initializing", errNotInitialized)
		}
	}
	if err != nil {
		e.mu.Unlock()
		if errors.Is(err, ErrFenced) {
			m.drop(key, e)
		}
		return nil, fmt.Errorf("loading share-partition %v: %w", key, err)
	}
	p, err := share.Restore(st.State)
	if err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("loading share-partition %v: %w", key, err)
	}
	e.p, e.stateEpoch, e.leaderEpoch, e.limits = p, st.StateEpoch, b.LeaderEpoch, set.Limits
	return e, nil
}

// errNotInitialized is a share-partition whose state the coordinator did
// not keep after an Initialize (another broker initialized it again in
// between): the next use tries again.
var errNotInitialized = errors.New("share-partition state not initialized")

// initialize chooses the start of a share-partition that has none, by the
// group's share.auto.offset.reset, and writes it. Its state epoch is the
// leader epoch plus one, or the stored one if higher: a broker that lost
// the leadership and initializes late is fenced (FENCED_STATE_EPOCH), so
// it never overwrites what the new leader wrote. The caller reads the
// state back, which records its leader epoch with the coordinator.
func (m *Manager) initialize(ctx context.Context, key Key, st Stored, exists bool, b Bounds, set Settings) error {
	start := b.HighWatermark
	if set.Reset != nil {
		var err error
		if start, err = set.Reset(b); err != nil {
			return err
		}
	}
	epoch := b.LeaderEpoch + 1
	if exists {
		epoch = max(epoch, st.StateEpoch)
	}
	return m.opts.Persister.Initialize(ctx, key, epoch, start)
}

// Acquire acquires for member what a read of the log from the
// share-partition's next fetch offset returns (read is called under the
// share-partition's lock, with that offset, only when it is below
// ReadEnd), less the records of aborted transactions, which it archives.
func (m *Manager) Acquire(ctx context.Context, key Key, member string, b Bounds, set Settings, maxRecords int64, mode share.AcquireMode,
	read func(from base.Offset) (Read, error)) ([]share.Acquisition, error) {
	e, err := m.loaded(ctx, key, b, set)
	if err != nil {
		return nil, err
	}
	defer e.mu.Unlock()
	e.p.AdvanceStart(b.LogStart)
	from := e.p.NextFetch()
	if from >= min(b.ReadEnd, b.HighWatermark) {
		return nil, nil
	}
	r, err := read(from)
	if err != nil {
		return nil, err
	}
	got := e.p.Acquire(member, r.Read, maxRecords, mode, set.Limits, m.opts.Clock.Now())
	return e.p.ArchiveAcquired(member, r.Aborted, got), nil
}

// Acknowledge applies member's acks and writes the result before it
// returns; on any error nothing changed.
func (m *Manager) Acknowledge(ctx context.Context, key Key, member string, b Bounds, set Settings, acks []share.Ack) error {
	e, err := m.loaded(ctx, key, b, set)
	if err != nil {
		return err
	}
	defer e.mu.Unlock()
	next := e.p.Clone()
	if err := next.Acknowledge(member, acks, set.Limits, m.opts.Clock.Now()); err != nil {
		return err
	}
	if err := m.write(ctx, key, e, next); err != nil {
		return err
	}
	released := next.NextFetch() < e.p.NextFetch()
	e.p = next
	if released {
		m.signal()
	}
	return nil
}

func (m *Manager) write(ctx context.Context, key Key, e *entry, p *share.Partition) error {
	err := m.opts.Persister.Write(ctx, key, e.stateEpoch, e.leaderEpoch, p.Snapshot(), p.Completed())
	if errors.Is(err, ErrFenced) {
		e.p = nil
		m.drop(key, e)
	}
	return err
}

// ReleaseMember gives back every record member holds in group's
// share-partitions here (its share session closed), and writes each one
// that changed.
func (m *Manager) ReleaseMember(ctx context.Context, group, member string) {
	m.releaseEach(ctx, func(k Key) bool { return k.Group == group }, func(p *share.Partition, lim share.Limits) bool {
		return p.ReleaseMember(member, lim)
	})
}

// ExpireLocks releases the records whose lock ended by now, and writes
// each share-partition that changed.
func (m *Manager) ExpireLocks(ctx context.Context) {
	now := m.opts.Clock.Now()
	m.releaseEach(ctx, func(Key) bool { return true }, func(p *share.Partition, lim share.Limits) bool {
		return p.ExpireLocks(now, lim)
	})
}

// releaseEach applies release to every loaded share-partition that match
// selects and writes those that changed. The released state is kept even if
// its write fails: the locks are gone either way, and the next write
// carries the state.
func (m *Manager) releaseEach(ctx context.Context, match func(Key) bool, release func(*share.Partition, share.Limits) bool) {
	changed := false
	for key, e := range m.snapshot(match) {
		e.mu.Lock()
		if e.p != nil && release(e.p, e.limits) {
			changed = true
			if err := m.write(ctx, key, e, e.p); err != nil {
				m.opts.Logger.Warn("share-partition state not written after a release; the next write carries it", "share_partition", key, "err", err)
			}
		}
		e.mu.Unlock()
	}
	if changed {
		m.signal()
	}
}

func (m *Manager) snapshot(match func(Key) bool) map[Key]*entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[Key]*entry{}
	for k, e := range m.mu.parts {
		if match(k) {
			out[k] = e
		}
	}
	return out
}

// DropPartition forgets every share-partition of a topic partition (no
// longer led here, or deleted): their locks are gone, and the next leader
// loads the coordinator's state.
func (m *Manager) DropPartition(topic base.TopicID, partition int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.mu.parts {
		if k.Topic == topic && k.Partition == partition {
			delete(m.mu.parts, k)
		}
	}
}

// DropGroup forgets every share-partition of group (the group was
// deleted): its next use loads what the coordinator holds then.
func (m *Manager) DropGroup(group string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.mu.parts {
		if k.Group == group {
			delete(m.mu.parts, k)
		}
	}
}

// Run releases expired locks every ExpiryInterval until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(m.opts.ExpiryInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.ExpireLocks(ctx)
		}
	}
}
