package partition

import (
	"errors"

	"github.com/strata-broker/strata/internal/base"
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

// ErrInvalidBatchCount means a produce carried other than exactly one batch
// for a partition, which Kafka refuses for magic v2.
var ErrInvalidBatchCount = &record.Error{Code: 87, Msg: "a produce request must carry exactly one record batch per partition"}

// Append validates one produce payload (exactly one v2 batch), assigns its
// offsets and writes it. The returned wait function blocks until the append
// is as durable as acks requires; it is nil when there is nothing to wait
// for. batch is rewritten in place.
func (p *Partition) Append(batch []byte, acks Acks) (AppendResult, func() error, error) {
	p.mu.Lock()
	cfg := p.mu.cfg
	p.mu.Unlock()
	h, err := record.Validate(batch, record.Limits{MaxBatchBytes: cfg.MaxMessageBytes})
	if err != nil {
		if h.Size() != len(batch) {
			// Two batches concatenated validate as a bad length: say why.
			if n, verr := record.ValidPrefix(batch); verr == nil && n == len(batch) {
				return AppendResult{}, nil, ErrInvalidBatchCount
			}
		}
		return AppendResult{}, nil, err
	}
	if cfg.RecompressSet && h.Codec() != cfg.Recompress {
		if batch, err = record.Recompress(batch, cfg.Recompress, nil); err != nil {
			return AppendResult{}, nil, err
		}
	}

	res, syncNeeded, err := p.appendValidated(batch, h, cfg, acks)
	if err != nil {
		return AppendResult{}, nil, err
	}
	if !syncNeeded {
		return res, nil, nil
	}
	return res, p.log.Sync, nil
}

func (p *Partition) appendValidated(batch []byte, h record.Header, cfg Config, acks Acks) (AppendResult, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return AppendResult{}, false, ErrClosed
	}
	if h.Idempotent() {
		v, err := p.mu.producers.Check(base.ProducerID(h.ProducerID), h.ProducerEpoch, h.BaseSequence, lastSequence(h))
		if err != nil {
			return AppendResult{}, false, err
		}
		if v.Kind == producers.Duplicate {
			res := AppendResult{BaseOffset: v.Original.FirstOffset, LogStart: p.mu.logStart, Duplicate: true}
			if cfg.LogAppendTime {
				res.LogAppendTime, res.LogAppendTimeMs = true, v.Original.TimestampMs
			}
			// A duplicate's original may not be synced yet; acks=all waits too.
			return res, acks == AcksAll, nil
		}
	}

	next := p.log.End()
	record.SetBaseOffset(batch, next)
	record.SetPartitionLeaderEpoch(batch, p.mu.epochs.latestEpoch())
	res := AppendResult{BaseOffset: next}
	maxTs := h.MaxTimestamp
	if cfg.LogAppendTime {
		now := p.opts.Clock.Now().UnixMilli()
		record.SetLogAppendTime(batch, now)
		res.LogAppendTime, res.LogAppendTimeMs, maxTs = true, now, now
	}
	if err := p.log.Append(batch); err != nil {
		return AppendResult{}, false, err
	}
	if h.Idempotent() {
		p.mu.producers.Update(base.ProducerID(h.ProducerID), h.ProducerEpoch, producers.BatchMeta{
			FirstSeq:    h.BaseSequence,
			LastSeq:     lastSequence(h),
			FirstOffset: next,
			LastOffset:  next + base.Offset(h.LastOffsetDelta),
			TimestampMs: maxTs,
		})
	}
	p.mu.highWatermark = p.log.End()
	res.LogStart = p.mu.logStart
	p.mu.unflushedMsgs += int64(h.NumRecords)
	syncNeeded := acks == AcksAll
	if cfg.FlushMessages > 0 && p.mu.unflushedMsgs >= cfg.FlushMessages {
		syncNeeded = true
	}
	if syncNeeded {
		p.mu.unflushedMsgs = 0
	}
	p.notifyLocked()
	return res, syncNeeded, nil
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

// Flush syncs the log if data has waited longer than the flush interval.
// Called by the broker's flush loop.
func (p *Partition) Flush() error {
	p.mu.Lock()
	p.mu.unflushedMsgs = 0
	p.mu.Unlock()
	err := p.log.Sync()
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}
