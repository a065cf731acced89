package partition

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/retention"
)

// ErrDeleteBeyondHighWatermark means DeleteRecords asked to delete offsets
// that are not yet committed.
var ErrDeleteBeyondHighWatermark = fmt.Errorf("partition: delete offset beyond high watermark")

// ErrRecordsKept means DeleteRecords asked to delete records of a topic
// whose cleanup.policy does not delete (Config.KeepRecords).
var ErrRecordsKept = errors.New("partition: records cannot be deleted under the topic's cleanup.policy")

// snapshotLocked is the retention planner's view of the partition. Nothing
// is tiered yet: the remote tier is an explicit, known-empty state.
func (p *Partition) snapshotLocked() retention.Snapshot {
	segs := p.log.Segments()
	local := make([]retention.Segment, len(segs))
	for i, s := range segs {
		local[i] = retention.Segment{
			Range:          base.Range{Start: s.BaseOffset, End: s.NextOffset},
			SizeBytes:      s.SizeBytes,
			MaxTimestampMs: segmentTimestampMs(s),
		}
	}
	return retention.Snapshot{
		LogStart:      p.mu.logStart,
		HighWatermark: p.mu.highWatermark,
		Local:         local,
		Tiered:        retention.Tiered{Known: true},
	}
}

// segmentTimestampMs is the time retention.ms ages a segment by: its
// largest record timestamp, or, as in Kafka's LogSegment.largestTimestamp,
// its last-modified time when it has no timestamp (-1, NO_TIMESTAMP, from
// producers that send none), so such a segment is not deleted at once.
func segmentTimestampMs(s log.SegmentInfo) int64 {
	if s.HasTimestamp && s.MaxTimestamp >= 0 {
		return s.MaxTimestamp
	}
	return s.LastModified.UnixMilli()
}

// ApplyRetention plans retention on a snapshot and executes the plan: it
// moves the log start forward (persisted first) and deletes whole local
// segments below it. It returns the plan it applied.
func (p *Partition) ApplyRetention(nowMs int64) (retention.Decision, error) {
	defer p.compactAbortedIndexLogged() // after the unlock
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return retention.Decision{}, ErrClosed
	}
	if p.mu.cfg.Tiered {
		// The tier loop plans retention of a tiered partition across both
		// tiers; two planners must never race.
		return retention.Decision{NewLogStart: p.mu.logStart}, nil
	}
	plan := retention.Plan(p.snapshotLocked(), p.mu.cfg.Retention, nowMs)
	return plan, p.applyPlanLocked(plan)
}

// ExpireProducers forgets idempotent producers idle longer than
// producer.id.expiration.ms, as Kafka does: a producer that comes back
// after that is treated as new. A producer with an open transaction is
// kept, however idle: its transaction holds the last stable offset.
func (p *Partition) ExpireProducers(nowMs int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if exp := p.mu.cfg.ProducerIDExpiration; exp > 0 && !p.mu.closed {
		p.mu.producers.ExpireBefore(nowMs, exp.Milliseconds())
	}
}

// DeleteRecords moves the log start to before (DeleteRecords API) and
// returns the resulting log start. A follower refuses it with
// ErrNotLeader; a topic whose cleanup.policy does not delete with
// ErrRecordsKept; an offset past the high watermark with
// ErrDeleteBeyondHighWatermark and a negative one (the API's -1, the
// high watermark, is resolved by the caller) with ErrOffsetOutOfRange,
// as Kafka's Partition.deleteRecordsOnLeader answers them.
func (p *Partition) DeleteRecords(before base.Offset) (base.Offset, error) {
	if before < 0 {
		return 0, fmt.Errorf("%w: DeleteRecords to offset %d", ErrOffsetOutOfRange, before)
	}
	defer p.compactAbortedIndexLogged() // after the unlock
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return 0, ErrClosed
	case p.mu.role != roleLeader: // a follower's log start follows its leader's
		return p.mu.logStart, ErrNotLeader
	case p.mu.cfg.KeepRecords:
		return p.mu.logStart, fmt.Errorf("%w: %v", ErrRecordsKept, p.opts.TP)
	}
	if before > p.mu.highWatermark {
		return p.mu.logStart, ErrDeleteBeyondHighWatermark
	}
	if p.mu.cfg.Tiered {
		// The tier loop owns a tiered partition's deletions: it removes
		// remote and local segments wholly below the log start on its next
		// pass. Here only the start moves (persisted), so nothing below it
		// is served from now on.
		if before > p.mu.logStart {
			if err := writeLogStart(p.opts.Dir, before); err != nil {
				return p.mu.logStart, err
			}
			p.mu.logStart = before
			p.pruneAbortedLocked()
		}
		return p.mu.logStart, nil
	}
	snap := p.snapshotLocked()
	snap.DeleteRecordsTo = before
	plan := retention.Plan(snap, retention.Policy{}, p.opts.Clock.Now().UnixMilli())
	if err := p.applyPlanLocked(plan); err != nil {
		return p.mu.logStart, err
	}
	return p.mu.logStart, nil
}

func (p *Partition) applyPlanLocked(plan retention.Decision) error {
	return p.applyDecisionLocked(plan, min(plan.DeleteLocalBefore, plan.NewLogStart))
}

// applyDecisionLocked moves the log start to plan.NewLogStart (never
// backward, persisted first) and deletes whole local segments below
// deleteLocalBefore.
func (p *Partition) applyDecisionLocked(plan retention.Decision, deleteLocalBefore base.Offset) error {
	if plan.NewLogStart > p.mu.logStart {
		for _, r := range plan.Reasons {
			p.logger.Info("advancing log start", "from", p.mu.logStart, "to", plan.NewLogStart,
				"reason", r.Kind, "range", r.Range.String(), "total_bytes", r.TotalBytes, "limit_bytes", r.LimitBytes)
		}
		// Persist the new start before deleting anything below it, so a
		// crash never resurrects deleted offsets as readable.
		if err := writeLogStart(p.opts.Dir, plan.NewLogStart); err != nil {
			return err
		}
		p.mu.logStart = plan.NewLogStart
		p.pruneAbortedLocked()
		if err := p.saveEpochsLocked(p.mu.epochs.truncateBefore(plan.NewLogStart)); err != nil {
			return err
		}
	}
	if deleteLocalBefore > p.log.Start() {
		return p.log.DeleteSegmentsBefore(deleteLocalBefore)
	}
	return nil
}
