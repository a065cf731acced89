package base

import "sort"

// EpochStart says that leader epoch Epoch began at offset Start: one entry
// of a replica's leader-epoch cache. A lineage is a []EpochStart with epochs
// strictly ascending and starts non-decreasing (an epoch led without an
// append starts where the next one does); each epoch covers the offsets up
// to the next one's Start, and the last one has no end.
type EpochStart struct {
	Epoch Epoch
	Start Offset
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch for a replica whose lineage
// and log end are given, as Kafka's LeaderEpochFileCache.endOffsetFor:
//   - for the latest epoch, logEnd: the epoch is still being written;
//   - for an older epoch, the largest known epoch at or below it and the
//     start of the next known epoch;
//   - for an epoch below every known one, that epoch itself and the start
//     of the first known epoch: the data in between is gone, and the asker
//     should replicate from there.
//
// ok is false (UNDEFINED_EPOCH_OFFSET on the wire) when the lineage is empty
// or epoch is above the latest.
func EndOffsetForEpoch(lineage []EpochStart, logEnd Offset, epoch Epoch) (Epoch, Offset, bool) {
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
