package partition

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
	"github.com/strata-broker/strata/internal/vfs"
)

// ErrNotLeader refuses a client's write (Append, AppendMarker,
// AppendFromCoordinator, DeleteRecords) and the leader-only calls
// (SetInSyncReplicas) on a follower; the api layer answers
// NOT_LEADER_OR_FOLLOWER, which makes the client refresh its metadata.
var ErrNotLeader = errors.New("partition: not the leader")

// ErrNotFollower refuses the follower-only calls (AppendAsFollower,
// SetHighWatermarkFromLeader, SetLogStartFromLeader, TruncateTo,
// TruncateFullyAndStartAt) on a leader.
var ErrNotFollower = errors.New("partition: not a follower")

// ErrStaleLeaderEpoch refuses a role change whose leader epoch is not newer
// than the partition's (see roleTransitions); nothing changes.
var ErrStaleLeaderEpoch = errors.New("partition: leader epoch not newer than the current one")

// role is what the partition is in its topic's replication. The zero value
// is invalid.
type role int8

const (
	roleLeader role = iota + 1
	roleFollower
)

func (r role) String() string {
	switch r {
	case roleLeader:
		return "leader"
	case roleFollower:
		return "follower"
	}
	return fmt.Sprintf("role(%d)", int8(r))
}

// roleOutcome is what a BecomeLeader or BecomeFollower call does.
type roleOutcome int8

const (
	// roleIgnore: nothing changes; a repeated or stale notice of the role
	// the partition has (BecomeLeader has always ignored an epoch not
	// newer than the latest).
	roleIgnore roleOutcome = iota + 1
	// roleNewEpoch: the role stays and the newer epoch is recorded.
	roleNewEpoch
	// roleSwitch: the role changes, with the epoch given.
	roleSwitch
	// roleRefuse: ErrStaleLeaderEpoch.
	roleRefuse
)

// roleTransitions is the valid-transition table: for the current role and
// the role asked for, the outcome when the epoch asked with is older than,
// equal to, or newer than the current leader epoch. A follower becomes
// leader only in a newer epoch: the controller bumps the epoch at every
// election. A leader may become a follower in its own epoch: Open makes
// every partition a leader in the epoch it is given, and the broker then
// makes it a follower in that same epoch if metadata says so.
var roleTransitions = map[[2]role][3]roleOutcome{
	{roleLeader, roleLeader}:     {roleIgnore, roleIgnore, roleNewEpoch},
	{roleLeader, roleFollower}:   {roleRefuse, roleSwitch, roleSwitch},
	{roleFollower, roleFollower}: {roleIgnore, roleIgnore, roleNewEpoch},
	{roleFollower, roleLeader}:   {roleRefuse, roleRefuse, roleSwitch},
}

// decideRole looks a role change up in roleTransitions.
func decideRole(from role, fromEpoch base.Epoch, to role, epoch base.Epoch) roleOutcome {
	row, ok := roleTransitions[[2]role{from, to}]
	if !ok {
		panic(fmt.Sprintf("partition: no role transition from %v to %v", from, to))
	}
	switch {
	case epoch < fromEpoch:
		return row[0]
	case epoch == fromEpoch:
		return row[1]
	}
	return row[2]
}

// BecomeLeader makes the partition the leader in epoch (from metadata):
// the epoch starts at the log end in the leader-epoch cache, which is
// persisted. An epoch not newer than the current one changes nothing for a
// leader; for a follower it is ErrStaleLeaderEpoch. A follower that becomes
// leader keeps its high watermark and has no in-sync replica count until
// SetInSyncReplicas gives one: until then appends do not move the high
// watermark, and acks=all appends are refused while min.insync.replicas is
// at least 1.
func (p *Partition) BecomeLeader(epoch base.Epoch) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return ErrClosed
	}
	switch decideRole(p.mu.role, p.mu.leaderEpoch, roleLeader, epoch) {
	case roleIgnore:
		return nil
	case roleRefuse:
		return fmt.Errorf("%w: partition %v follows in epoch %d, asked to lead in %d", ErrStaleLeaderEpoch, p.opts.TP, p.mu.leaderEpoch, epoch)
	case roleSwitch:
		p.logger.Info("becoming leader", "epoch", epoch, "from_epoch", p.mu.leaderEpoch,
			"log_end", p.log.End(), "high_watermark", p.mu.highWatermark)
		p.mu.inSync = 0
	}
	if err := p.becomeLeaderLocked(epoch); err != nil {
		return err
	}
	p.setRoleLocked(roleLeader)
	p.mu.leaderEpoch = epoch
	p.notifyLocked()
	return nil
}

// BecomeFollower makes the partition a follower of the leader of epoch
// (from metadata): from now on it refuses client writes with ErrNotLeader
// and takes the leader's batches through AppendAsFollower; its high
// watermark stays where it is until SetHighWatermarkFromLeader moves it.
// A leader that becomes a follower forgets the epochs it began without
// appending to them (they start at its log end): a follower's leader-epoch
// cache describes only the batches it holds, as Kafka's does after its
// fetcher truncates. An epoch older than the current one changes nothing
// for a follower; for a leader it is ErrStaleLeaderEpoch.
func (p *Partition) BecomeFollower(epoch base.Epoch) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return ErrClosed
	}
	switch decideRole(p.mu.role, p.mu.leaderEpoch, roleFollower, epoch) {
	case roleIgnore:
		return nil
	case roleRefuse:
		return fmt.Errorf("%w: partition %v leads in epoch %d, asked to follow in %d", ErrStaleLeaderEpoch, p.opts.TP, p.mu.leaderEpoch, epoch)
	case roleSwitch:
		end := p.log.End()
		p.logger.Info("becoming follower", "epoch", epoch, "from_epoch", p.mu.leaderEpoch,
			"log_end", end, "high_watermark", p.mu.highWatermark)
		if err := p.saveEpochsLocked(p.mu.epochs.truncateFromEnd(end)); err != nil {
			return err
		}
	}
	p.setRoleLocked(roleFollower)
	p.mu.leaderEpoch, p.mu.inSync = epoch, 0
	p.notifyLocked()
	return nil
}

// IsLeader reports whether the partition is its topic's leader here.
func (p *Partition) IsLeader() bool { return p.leading.Load() }

// setRoleLocked records the partition's role; mu must be held.
func (p *Partition) setRoleLocked(r role) {
	p.mu.role = r
	p.leading.Store(r == roleLeader)
}

// LatestEpoch is the newest epoch of the leader-epoch cache, the epoch of
// the log's last batch (or of a leader's current epoch): what a follower
// sends as its last fetched epoch. ok is false when the cache is empty.
func (p *Partition) LatestEpoch() (base.Epoch, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.mu.epochs.entries)
	if n == 0 {
		return 0, false
	}
	return p.mu.epochs.entries[n-1].Epoch, true
}

// SetInSyncReplicas tells a leader how many replicas its ISR holds, itself
// included (n >= 1); the replication layer calls it after BecomeLeader and
// at every ISR change. With n == 1 the partition is the only in-sync
// replica, as before replication: the high watermark moves to the log end
// now and with every append, and acks=all waits only for the local
// fdatasync. With n > 1 appends leave the high watermark alone and
// AdvanceHighWatermark moves it. An acks=all append or a marker is refused
// with ErrNotEnoughReplicas while n < min.insync.replicas. A follower
// refuses it with ErrNotLeader.
func (p *Partition) SetInSyncReplicas(n int) error {
	if n < 1 {
		return fmt.Errorf("partition %v: an ISR of %d replicas; the leader is always in its ISR", p.opts.TP, n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return ErrClosed
	case p.mu.role != roleLeader:
		return ErrNotLeader
	}
	p.mu.inSync = n
	if end := p.log.End(); n == 1 && end > p.mu.highWatermark {
		// Kafka's maybeIncrementLeaderHW with an ISR of the leader alone.
		p.mu.highWatermark = end
		p.notifyLocked()
	}
	return nil
}

// AdvanceHighWatermark moves a leader's high watermark forward to hw (the
// replication layer's minimum over its ISR's log ends), never past the log
// end; it reports whether it moved. A follower's, and a move backward, are
// ignored. Kafka: maybeIncrementHighWatermark.
func (p *Partition) AdvanceHighWatermark(hw base.Offset) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed || p.mu.role != roleLeader {
		return false
	}
	hw = min(hw, p.log.End())
	if hw <= p.mu.highWatermark {
		return false
	}
	p.mu.highWatermark, p.mu.hwFromRestart = hw, false
	p.notifyLocked()
	return true
}

// SetHighWatermarkFromLeader sets a follower's high watermark from its
// leader's fetch response, bounded by its own log (Kafka's follower
// maybeUpdateHighWatermark): min(hw, log end), and not below the log
// start. It may move backward (a new leader's high watermark may lag its
// predecessor's), which is logged. It returns the high watermark set.
func (p *Partition) SetHighWatermarkFromLeader(hw base.Offset) (base.Offset, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return p.mu.highWatermark, ErrClosed
	case p.mu.role != roleFollower:
		return p.mu.highWatermark, ErrNotFollower
	}
	hw = max(min(hw, p.log.End()), p.mu.logStart)
	fromRestart := p.mu.hwFromRestart
	p.mu.hwFromRestart = false
	if hw == p.mu.highWatermark {
		if fromRestart {
			p.notifyLocked() // confirmed: readers waiting on it may go on
		}
		return hw, nil
	}
	switch {
	case hw < p.mu.highWatermark && fromRestart:
		p.logger.Info("high watermark set to the leader's, below the log end taken at restart", "from", p.mu.highWatermark, "to", hw)
	case hw < p.mu.highWatermark:
		p.logger.Warn("high watermark moves backward to the leader's", "from", p.mu.highWatermark, "to", hw)
	}
	p.mu.highWatermark = hw
	p.notifyLocked()
	return hw, nil
}

// SetLogStartFromLeader moves a follower's log start forward to its
// leader's, from a fetch response (Kafka's maybeIncrementLogStartOffset
// with LeaderOffsetIncremented), through the path retention uses: the new
// start is persisted first, then the local segments wholly below it are
// deleted. A start at or below the current one changes nothing. One past
// the high watermark is refused with ErrOffsetOutOfRange and changes
// nothing (as in Kafka: the log start never passes the high watermark); a
// follower whose whole log is below its leader's log start starts over
// with TruncateFullyAndStartAt.
func (p *Partition) SetLogStartFromLeader(start base.Offset) error {
	defer p.compactAbortedIndexLogged() // after the unlock
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return ErrClosed
	case p.mu.role != roleFollower:
		return ErrNotFollower
	case start <= p.mu.logStart:
		return nil
	case start > p.mu.highWatermark:
		return fmt.Errorf("%w: partition %v: the leader's log start %d is past the high watermark %d",
			ErrOffsetOutOfRange, p.opts.TP, start, p.mu.highWatermark)
	}
	p.logger.Info("log start follows the leader's", "from", p.mu.logStart, "to", start)
	return p.applyDecisionLocked(retention.Decision{NewLogStart: start}, start)
}

// writeEpochsLocked persists the leader-epoch cache. A failed write marks
// the cache unsaved, for saveEpochsLocked to write it again at the next
// chance: the cache in memory never stays ahead of its checkpoint because
// the change that put it ahead was already made when the write failed.
func (p *Partition) writeEpochsLocked() error {
	if err := vfs.WriteFileAtomic(p.opts.Dir, epochCheckpointFile, p.mu.epochs.encode()); err != nil {
		p.mu.epochsUnsaved = true
		return err
	}
	p.mu.epochsUnsaved = false
	return nil
}

// saveEpochsLocked writes the leader-epoch cache when it changed, or when
// an earlier write of it failed.
func (p *Partition) saveEpochsLocked(changed bool) error {
	if !changed && !p.mu.epochsUnsaved {
		return nil
	}
	return p.writeEpochsLocked()
}
