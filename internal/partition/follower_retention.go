package partition

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// ErrFollowerNotTiered refuses DeleteTieredLocalBefore on a partition
// whose topic is not tiered (or no longer is): no remote copy stands in
// for what it would delete.
var ErrFollowerNotTiered = errors.New("partition: not tiered; a follower deletes local segments only below its leader's log start")

// DeleteTieredLocalBefore is a follower's local retention of a tiered
// partition (DESIGN §4 rule 5; tier.PlanFollowerLocal decides off): it
// deletes the local segments that end at or below off, never the active
// one, with the log's crash-safe deletion (renamed to .deleted, directory
// synced, then removed), as the retention executor does. Only the local
// log start moves; the log start, which stays the leader's (learned by
// fetch), the leader-epoch cache, the producer state and the aborted
// transactions are untouched, since the offsets stay in the log, in the
// remote tier. So logStart <= localLogStart holds after it, and a reopen
// keeps the log start below the local one (load, for a tiered topic).
//
// The caller vouches that the remote tier holds [logStart, off); the
// partition checks what it can: off is not above the high watermark
// (ErrOffsetOutOfRange). A leader refuses it with ErrNotFollower (its
// tier loop applies its own retention), an untiered partition with
// ErrFollowerNotTiered. An off at or below the local log start does
// nothing.
func (p *Partition) DeleteTieredLocalBefore(off base.Offset) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return ErrClosed
	case p.mu.role != roleFollower:
		return ErrNotFollower
	case !p.mu.cfg.Tiered:
		return ErrFollowerNotTiered
	case off > p.mu.highWatermark:
		return fmt.Errorf("%w: partition %v: local deletion below %d, past the high watermark %d",
			ErrOffsetOutOfRange, p.opts.TP, off, p.mu.highWatermark)
	case off <= p.log.Start():
		return nil
	}
	if err := p.log.DeleteSegmentsBefore(off); err != nil {
		return fmt.Errorf("partition %v: deleting tiered local segments below %d: %w", p.opts.TP, off, err)
	}
	return nil
}
