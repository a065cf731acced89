package replication

import (
	"fmt"
	"sort"

	"github.com/strata-broker/strata/internal/base"
)

// EpochStart says that leader epoch Epoch began at offset Start: one entry of
// a replica's leader-epoch cache. A lineage is a []EpochStart with epochs
// strictly ascending and starts non-decreasing (doc.go).
type EpochStart struct {
	Epoch base.Epoch
	Start base.Offset
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch for a replica whose lineage
// and log end are given, as Kafka's LeaderEpochFileCache.endOffsetFor (and
// Strata's partition epoch cache, which it must agree with):
//   - for the latest epoch, logEnd: the epoch is still being written;
//   - for an older epoch, the largest known epoch at or below it and the
//     start of the next known epoch;
//   - for an epoch below every known one, that epoch itself and the start
//     of the first known epoch: the data in between is gone, and the asker
//     should replicate from there.
//
// ok is false (UNDEFINED_EPOCH_OFFSET on the wire) when the lineage is empty
// or epoch is above the latest.
func EndOffsetForEpoch(lineage []EpochStart, logEnd base.Offset, epoch base.Epoch) (base.Epoch, base.Offset, bool) {
	mustLineage(lineage, logEnd)
	n := len(lineage)
	switch {
	case n == 0 || epoch > lineage[n-1].Epoch:
		return 0, 0, false
	case epoch == lineage[n-1].Epoch:
		return epoch, logEnd, true
	case epoch < lineage[0].Epoch:
		return epoch, lineage[0].Start, true
	}
	// The first entry above epoch; it exists because epoch < the latest.
	i := sort.Search(n, func(i int) bool { return lineage[i].Epoch > epoch })
	return lineage[i-1].Epoch, lineage[i].Start, true
}

// TruncateLineage is the lineage of a log truncated to end: every epoch
// that starts at or after end goes, as Kafka's
// LeaderEpochFileCache.truncateFromEnd. UnifiedLog.truncateTo applies it
// even when end is at or past the log end (then with the log end), to drop
// an epoch this replica started as leader but never wrote to: kept, it
// would be asked about again and again and truncation would not finish.
// The result shares no memory with lineage.
func TruncateLineage(lineage []EpochStart, end base.Offset) []EpochStart {
	i := 0
	for i < len(lineage) && lineage[i].Start < end {
		i++
	}
	return append([]EpochStart(nil), lineage[:i]...)
}

// LatestEpoch is the lineage's latest epoch, the LastFetchedEpoch a follower
// sends (ok is false for an empty lineage: the follower sends none).
func LatestEpoch(lineage []EpochStart) (base.Epoch, bool) {
	if len(lineage) == 0 {
		return 0, false
	}
	return lineage[len(lineage)-1].Epoch, true
}

// mustLineage asserts the lineage invariant of doc.go.
func mustLineage(lineage []EpochStart, logEnd base.Offset) {
	for i, e := range lineage {
		if e.Start < 0 || e.Start > logEnd {
			panic(fmt.Sprintf("replication: lineage entry %d %+v outside the log [0, %d]", i, e, logEnd))
		}
		if i > 0 && (e.Epoch <= lineage[i-1].Epoch || e.Start < lineage[i-1].Start) {
			panic(fmt.Sprintf("replication: lineage not ascending at entry %d: %v", i, lineage))
		}
	}
}
