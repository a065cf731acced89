package partition

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// Acks is how much durability a producer asked for.
type Acks int8

const (
	AcksNone   Acks = iota + 1 // acks=0
	AcksLeader                 // acks=1: in the page cache
	AcksAll                    // acks=-1: fdatasynced, as the ISR is only this broker
)

// AppendResult is what a producer is told about an accepted batch.
type AppendResult struct {
	BaseOffset base.Offset
	// LogAppendTimeMs is the broker-assigned timestamp, valid when
	// LogAppendTime is true.
	LogAppendTimeMs int64
	LogAppendTime   bool
	LogStart        base.Offset
	// Duplicate is true when the batch was already written: the offsets are
	// those of the original append.
	Duplicate bool
}

// ErrNotEnoughReplicas refuses an acks=all append while the in-sync
// replicas (SetInSyncReplicas) are fewer than min.insync.replicas (Kafka's
// NOT_ENOUGH_REPLICAS); nothing is appended.
var ErrNotEnoughReplicas = errors.New("partition: fewer in-sync replicas than min.insync.replicas")

// ErrInvalidBatchCount means a produce carried other than exactly one batch
// for a partition, which Kafka refuses for magic v2.
var ErrInvalidBatchCount = &record.Error{Code: 87, Msg: "a produce request must carry exactly one record batch per partition"}

// origin is who wrote a batch, which decides the producer checks it gets
// (Kafka's AppendOrigin).
type origin int8

const (
	// originClient: a producer's batch; sequences are checked.
	originClient origin = iota + 1
	// originCoordinator: a coordinator's own batch; no sequences.
	originCoordinator
)

// Append validates one produce payload (exactly one v2 batch), assigns its
// offsets and writes it. The returned wait function blocks until the append
// is as durable as acks requires; it is nil when there is nothing to wait
// for. batch is rewritten in place. A control batch is refused with
// INVALID_RECORD: only AppendMarker writes markers.
//
// An append that rolls a segment also writes a producer-state snapshot,
// after the partition lock is released: that append's caller pays one
// fsync per segment roll, other producers do not wait for it.
//
// A follower refuses it with ErrNotLeader. With more in-sync replicas
// than this one (SetInSyncReplicas), the wait function still returns once
// the batch is fdatasynced here; an acks=all caller then also waits for
// the high watermark to pass the batch (AdvanceHighWatermark).
func (p *Partition) Append(batch []byte, acks Acks) (AppendResult, func() error, error) {
	return p.appendBatch(batch, acks, originClient, 0)
}

func (p *Partition) appendBatch(batch []byte, acks Acks, from origin, guard VerificationGuard) (AppendResult, func() error, error) {
	p.mu.Lock()
	cfg, leader, inSync := p.mu.cfg, p.mu.role == roleLeader, p.mu.inSync
	p.mu.Unlock()
	if !leader {
		return AppendResult{}, nil, ErrNotLeader
	}
	if acks == AcksAll && cfg.MinInsyncReplicas > inSync {
		return AppendResult{}, nil, fmt.Errorf("%w: %d in sync, min.insync.replicas=%d", ErrNotEnoughReplicas, inSync, cfg.MinInsyncReplicas)
	}
	h, err := record.Validate(batch, record.Limits{MaxBatchBytes: cfg.MaxMessageBytes,
		Timestamps: cfg.timestampRange(p.opts.Clock), FromCoordinator: from == originCoordinator})
	if err != nil {
		// Two batches concatenated validate as a bad length: say why.
		if framesSeveralBatches(batch) {
			return AppendResult{}, nil, ErrInvalidBatchCount
		}
		return AppendResult{}, nil, err
	}
	if cfg.RecompressSet && h.Codec() != cfg.Recompress {
		if batch, err = record.RecompressLevel(batch, cfg.Recompress, cfg.RecompressLevel, nil); err != nil {
			return AppendResult{}, nil, err
		}
		// Recompression can grow a batch; Kafka checks the size again.
		if len(batch) > cfg.MaxMessageBytes {
			return AppendResult{}, nil, &record.Error{Code: record.CodeMessageTooLarge,
				Msg: fmt.Sprintf("batch of %d bytes after recompression exceeds max %d", len(batch), cfg.MaxMessageBytes)}
		}
	}

	if cfg.Compact {
		if err := requireKeys(batch, p.opts.TP); err != nil {
			return AppendResult{}, nil, err
		}
	}
	out, err := p.appendValidated(batch, h, cfg, acks, from, guard)
	if err != nil {
		return AppendResult{}, nil, err
	}
	p.writeSnapshotLogged(out.snapshot)
	if !out.syncNeeded {
		return out.res, nil, nil
	}
	// Wait for this batch only: a pipelined request behind it must not
	// make it wait for another round.
	end := out.syncTo
	if from == originCoordinator {
		return out.res, func() error { return p.syncAndReplicate(end) }, nil
	}
	return out.res, func() error { return p.log.SyncTo(end) }, nil
}

// appendOutcome is what appendValidated decided under the lock; the
// snapshot, if any, is written after it is released.
type appendOutcome struct {
	res        AppendResult
	syncNeeded bool
	syncTo     base.Offset // with syncNeeded: durable below this, the batch is
	snapshot   *producerSnapshot
}

func (p *Partition) appendValidated(batch []byte, h record.Header, cfg Config, acks Acks, from origin, guard VerificationGuard) (appendOutcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return appendOutcome{}, ErrClosed
	case p.mu.role != roleLeader: // it became a follower since appendBatch looked
		return appendOutcome{}, ErrNotLeader
	}
	pid := base.ProducerID(h.ProducerID)
	switch {
	case !h.Idempotent():
	case from == originCoordinator:
		if err := p.mu.producers.CheckCoordinator(pid, h.ProducerEpoch, h.Transactional()); err != nil {
			return appendOutcome{}, fmt.Errorf("partition %v: coordinator batch at %d: %w", p.opts.TP, p.log.End(), err)
		}
	default:
		v, err := p.mu.producers.Check(pid, h.ProducerEpoch, h.BaseSequence, lastSequence(h), h.Transactional())
		if err != nil {
			return appendOutcome{}, err
		}
		if v.Kind == producers.Duplicate {
			res := AppendResult{BaseOffset: v.Original.FirstOffset, LogStart: p.mu.logStart, Duplicate: true}
			if cfg.LogAppendTime {
				res.LogAppendTime, res.LogAppendTimeMs = true, v.Original.TimestampMs
			}
			// A duplicate's original may not be synced yet; acks=all waits too.
			return appendOutcome{res: res, syncNeeded: acks == AcksAll, syncTo: v.Original.LastOffset + 1}, nil
		}
		if h.Transactional() {
			if err := p.checkGuardLocked(pid, h.ProducerEpoch, guard); err != nil {
				return appendOutcome{}, err
			}
		}
	}

	var res AppendResult
	maxTs := h.MaxTimestamp
	now := p.opts.Clock.Now()
	if cfg.LogAppendTime {
		nowMs := now.UnixMilli()
		record.SetLogAppendTime(batch, nowMs)
		res.LogAppendTime, res.LogAppendTimeMs, maxTs = true, nowMs, nowMs
	}
	next, snap, err := p.writeLocked(batch, h.LastOffsetDelta, cfg, now)
	if err != nil {
		return appendOutcome{}, err
	}
	res.BaseOffset = next
	switch {
	case !h.Idempotent():
	case from == originCoordinator:
		p.mu.producers.UpdateCoordinator(pid, h.ProducerEpoch, next, maxTs, h.Transactional())
	default:
		p.mu.producers.Update(pid, h.ProducerEpoch, producers.BatchMeta{
			FirstSeq:    h.BaseSequence,
			LastSeq:     lastSequence(h),
			FirstOffset: next,
			LastOffset:  next + base.Offset(h.LastOffsetDelta),
			TimestampMs: maxTs,
		}, h.Transactional())
	}
	p.advanceAloneLocked()
	res.LogStart = p.mu.logStart
	p.mu.unflushedMsgs += int64(h.NumRecords)
	syncNeeded := acks == AcksAll
	if cfg.FlushMessages > 0 && p.mu.unflushedMsgs >= cfg.FlushMessages {
		syncNeeded = true
	}
	if syncNeeded {
		p.mu.unflushedMsgs = 0
	} else if p.mu.unflushedMsgs == int64(h.NumRecords) {
		p.mu.oldestUnflushedAt = p.opts.Clock.Now()
	}
	p.notifyLocked()
	return appendOutcome{res: res, syncNeeded: syncNeeded, syncTo: next + base.Offset(h.LastOffsetDelta) + 1, snapshot: snap}, nil
}

// writeLocked assigns batch (one whole batch spanning lastOffsetDelta+1
// offsets) the offsets at the log end, stamps the leader epoch and appends
// it. It returns the batch's base offset and, when the batch began a new
// segment, the producer snapshot at that segment's base (the state before
// the batch), for the caller to write once the lock is released. now is
// the clock reading the append is judged by.
func (p *Partition) writeLocked(batch []byte, lastOffsetDelta int32, cfg Config, now time.Time) (base.Offset, *producerSnapshot, error) {
	next := p.log.End()
	record.SetBaseOffset(batch, next)
	record.SetPartitionLeaderEpoch(batch, p.mu.epochs.latestEpoch())
	mayRoll := p.mu.active.mayRoll(cfg, len(batch), next+base.Offset(lastOffsetDelta), now)
	if err := p.log.Append(batch); err != nil {
		return 0, nil, err
	}
	var snap *producerSnapshot
	if !mayRoll {
		p.mu.active.bytes += int64(len(batch))
		p.mu.active.batches++
	} else if at, rolled := p.refreshActiveLocked(next, next, now); rolled {
		snap = p.producerSnapshotLocked(at)
	}
	return next, snap, nil
}

// advanceAloneLocked moves the high watermark to the log end after a
// leader's append when the leader is its only in-sync replica: the ISR
// has it all. With more, the replication layer moves it.
func (p *Partition) advanceAloneLocked() {
	if p.mu.inSync == 1 {
		p.mu.highWatermark = p.log.End()
	}
}

// framesSeveralBatches reports whether b is two or more whole batches.
// Only framing is checked: producer batches all carry base offset 0, so
// record.ValidPrefix, which wants offsets ascending, stops after the first.
func framesSeveralBatches(b []byte) bool {
	it := record.SplitBatches(b)
	n := 0
	for {
		if _, _, ok := it.Next(); !ok {
			return n > 1 && it.Err() == nil
		}
		n++
	}
}

// lastSequence is the sequence of the batch's last record; sequences wrap
// at the int32 maximum, as in Kafka.
func lastSequence(h record.Header) int32 {
	last := int64(h.BaseSequence) + int64(h.LastOffsetDelta)
	if last > 1<<31-1 {
		last -= 1 << 31
	}
	return int32(last)
}

// FlushIfDue syncs the log when unflushed data is older than the topic's
// flush.ms (log.flush.interval.ms). The broker's flush loop calls it.
func (p *Partition) FlushIfDue() error {
	p.mu.Lock()
	interval := p.mu.cfg.FlushInterval
	due := interval > 0 && p.mu.unflushedMsgs > 0 && p.opts.Clock.Now().Sub(p.mu.oldestUnflushedAt) >= interval
	p.mu.Unlock()
	if !due {
		return nil
	}
	return p.Flush()
}

// Flush syncs everything appended so far.
func (p *Partition) Flush() error {
	p.mu.Lock()
	p.mu.unflushedMsgs = 0
	p.mu.Unlock()
	err := p.log.Sync()
	// The log reports its own closed error, not the partition's.
	if errors.Is(err, log.ErrClosed) {
		return nil
	}
	return err
}
