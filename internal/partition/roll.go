package partition

import (
	"math"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// activeEstimate is what the partition knows of the log's active segment.
// The log tells which segment is active only through Segments(), which
// copies the description of every segment; asking after every append would
// cost an allocation proportional to the segment count. The partition asks
// only when mayRoll says the append might have rolled.
//
// Invariant: each field errs on the side of asking. bytes is the segment's
// size, batches is at least its batch count (which bounds its index
// entries), and since is no later than when the log started the segment.
// A roll the estimate missed is found at the next refresh; only the
// snapshot at that boundary is lost, which costs a longer replay.
type activeEstimate struct {
	base    base.Offset
	bytes   int64
	batches int64
	since   time.Time
}

// mayRoll reports whether appending a batch of batchBytes ending at
// lastOffset might make the log roll. It restates the log's roll rules
// (segment.bytes, segment.ms, a full index, a relative offset overflowing
// 32 bits) with margins.
func (a activeEstimate) mayRoll(cfg Config, batchBytes int, lastOffset base.Offset, now time.Time) bool {
	// An index entry takes at least 8 bytes (offset) or 12 (time); 16
	// leaves room. Each batch adds at most one entry.
	const minIndexEntryBytes = 16
	// The log reads its clock a moment after now; a second covers that
	// moment, and costs a Segments() call per append in the last second
	// of a segment's segment.ms.
	const clockSkew = time.Second
	return a.bytes+int64(batchBytes) > cfg.SegmentBytes ||
		(cfg.SegmentMaxAge > 0 && now.Sub(a.since) >= cfg.SegmentMaxAge-clockSkew) ||
		a.batches+1 >= int64(cfg.SegmentIndexBytes/minIndexEntryBytes) ||
		int64(lastOffset-a.base) > math.MaxUint32/2
}

// refreshActiveLocked reads the active segment from the log after an
// append that the estimate said might roll: one batch starting at
// batchBase, appended when the log ended at end (batchBase itself for a
// leader's append; a follower's batch may start past it, across a gap),
// with now taken before the append. If the log rolled to a new segment
// that begins with that batch, it returns the new segment's base: end (the
// gap before the batch is inside the new segment), or the batch's base
// after a gap too large for one segment's index (log.AppendReplicated).
// Either way no batch lies between it and the batch, so a producer
// snapshot there holds the state before the batch.
func (p *Partition) refreshActiveLocked(end, batchBase base.Offset, now time.Time) (base.Offset, bool) {
	segs := p.log.Segments()
	last := segs[len(segs)-1]
	a := &p.mu.active
	rolled := last.BaseOffset != a.base
	// A roll the estimate missed started its segment at or before a batch
	// appended earlier, all of which end at or before end.
	thisBatch := rolled && last.BaseOffset >= end && last.BaseOffset <= batchBase
	a.base, a.bytes = last.BaseOffset, last.SizeBytes
	switch {
	case !rolled:
		a.batches++
	case thisBatch:
		a.batches, a.since = 1, now
	default:
		// A roll the estimate missed: it happened after the old since,
		// which therefore stays a lower bound.
		a.batches = last.SizeBytes / record.HeaderSize
	}
	return last.BaseOffset, thisBatch
}

// resetActiveLocked sets the estimate from the log, as at open. since is
// a time taken before the log was opened.
func (p *Partition) resetActiveLocked(since time.Time) {
	segs := p.log.Segments()
	last := segs[len(segs)-1]
	p.mu.active = activeEstimate{
		base:    last.BaseOffset,
		bytes:   last.SizeBytes,
		batches: last.SizeBytes / record.HeaderSize,
		since:   since,
	}
}
