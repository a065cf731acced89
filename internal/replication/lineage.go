package replication

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// EndOffsetForEpoch is base.EndOffsetForEpoch for a lineage that holds
// the invariant of doc.go (asserted): the answer a leader's fetch check
// and its OffsetForLeaderEpoch (the partition's epoch cache) both give.
func EndOffsetForEpoch(lineage []base.EpochStart, logEnd base.Offset, epoch base.Epoch) (base.Epoch, base.Offset, bool) {
	mustLineage(lineage, logEnd)
	return base.EndOffsetForEpoch(lineage, logEnd, epoch)
}

// TruncateLineage is the lineage of a log truncated to end: every epoch
// that starts at or after end goes, as Kafka's
// LeaderEpochFileCache.truncateFromEnd. UnifiedLog.truncateTo applies it
// even when end is at or past the log end (then with the log end), to drop
// an epoch this replica started as leader but never wrote to: kept, it
// would be asked about again and again and truncation would not finish.
// The result shares no memory with lineage.
func TruncateLineage(lineage []base.EpochStart, end base.Offset) []base.EpochStart {
	i := 0
	for i < len(lineage) && lineage[i].Start < end {
		i++
	}
	return append([]base.EpochStart(nil), lineage[:i]...)
}

// LatestEpoch is the lineage's latest epoch, the LastFetchedEpoch a follower
// sends (ok is false for an empty lineage: the follower sends none).
func LatestEpoch(lineage []base.EpochStart) (base.Epoch, bool) {
	if len(lineage) == 0 {
		return 0, false
	}
	return lineage[len(lineage)-1].Epoch, true
}

// mustLineage asserts the lineage invariant of doc.go.
func mustLineage(lineage []base.EpochStart, logEnd base.Offset) {
	for i, e := range lineage {
		if e.Start < 0 || e.Start > logEnd {
			panic(fmt.Sprintf("replication: lineage entry %d %+v outside the log [0, %d]", i, e, logEnd))
		}
		if i > 0 && (e.Epoch <= lineage[i-1].Epoch || e.Start < lineage[i-1].Start) {
			panic(fmt.Sprintf("replication: lineage not ascending at entry %d: %v", i, lineage))
		}
	}
}
