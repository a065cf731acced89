package tier

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// noEnd is the end of the last epoch of a lineage, which is still open.
const noEnd = base.Offset(math.MaxInt64)

// validateLineage checks that l is ascending in both epoch and start. A
// lineage comes from the partition's leader-epoch cache, which validates
// it on load, so a bad one here is a programmer error.
func validateLineage(l []base.EpochStart) error {
	for i, e := range l {
		if e.Epoch < 0 || e.Start < 0 {
			return fmt.Errorf("tier: lineage entry %d is negative: %v", i, e)
		}
		if i > 0 && (e.Epoch <= l[i-1].Epoch || e.Start <= l[i-1].Start) {
			return fmt.Errorf("tier: lineage %v is not ascending at entry %d", l, i)
		}
	}
	return nil
}

func mustValidLineage(l []base.EpochStart) {
	if err := validateLineage(l); err != nil {
		panic(err.Error())
	}
}

// epochRange is the offsets epoch e covers in l, and whether l has e.
func epochRange(l []base.EpochStart, e base.Epoch) (base.Range, bool) {
	i, ok := slices.BinarySearchFunc(l, e, func(x base.EpochStart, e base.Epoch) int { return cmp.Compare(x.Epoch, e) })
	if !ok {
		return base.Range{}, false
	}
	end := noEnd
	if i+1 < len(l) {
		end = l[i+1].Start
	}
	return base.Range{Start: l[i].Start, End: end}, true
}

// inLineage reports whether every offset of s carries the epoch that l
// gives it, so s holds this leader's history and not a diverged one.
//
// l speaks only for offsets at or after its first Start: when the log
// start moves, the epoch cache is truncated from the front and its first
// entry is moved up to the new log start (as Kafka's truncateFromStart
// does), so the part of a segment below it cannot be checked and is
// outside the log anyway. A segment entirely below it is not in the
// lineage: nothing vouches for it (see PlanStrays).
func inLineage(s remotemeta.RemoteSegment, l []base.EpochStart) bool {
	if len(l) == 0 || s.Range.End <= l[0].Start {
		return false
	}
	for i, e := range s.LeaderEpochs {
		part := base.Range{Start: max(e.Start, l[0].Start), End: s.Range.End}
		if i+1 < len(s.LeaderEpochs) {
			part.End = s.LeaderEpochs[i+1].Start
		}
		if part.Empty() {
			continue
		}
		r, ok := epochRange(l, e.Epoch)
		// Containment of every part in the same epoch's range also forces the
		// epoch boundaries inside s to be the lineage's: the parts tile s.
		if !ok || part.Start < r.Start || part.End > r.End {
			return false
		}
	}
	return true
}
