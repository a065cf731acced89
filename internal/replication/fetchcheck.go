package replication

import "github.com/strata-broker/strata/internal/base"

// FetchVerdict is the leader's judgement of a follower fetch's position.
// The zero value is invalid.
type FetchVerdict uint8

const (
	// FetchFromOffset: the follower's log matches the leader's up to the
	// fetch offset; serve records from it.
	FetchFromOffset FetchVerdict = iota + 1
	// FetchDiverging: the follower's log diverges from the leader's; answer
	// with FetchCheck.Diverging (the Fetch response's DivergingEpoch) and no
	// records, and do not record the fetch as follower progress.
	FetchDiverging
	// FetchOutOfRange: answer OFFSET_OUT_OF_RANGE; the leader cannot place
	// the last fetched epoch, or the fetch offset is below its log start.
	FetchOutOfRange
)

func (v FetchVerdict) String() string {
	switch v {
	case FetchFromOffset:
		return "fetch-from-offset"
	case FetchDiverging:
		return "diverging"
	case FetchOutOfRange:
		return "out-of-range"
	}
	return "invalid"
}

// FetchCheck is CheckFetch's answer. Diverging is set only when Verdict is
// FetchDiverging.
type FetchCheck struct {
	Verdict   FetchVerdict
	Diverging EpochEnd
}

// EpochEnd is an epoch and the exclusive end offset of its data on the
// replica that answered: Fetch's DivergingEpoch, or a defined
// OffsetForLeaderEpoch answer.
type EpochEnd struct {
	Epoch base.Epoch
	End   base.Offset
}

// CheckFetch is the leader's check of a follower fetch that carries
// LastFetchedEpoch (Fetch v12+, KIP-595's truncation on fetch, as Kafka's
// Partition.readRecords does it): the leader looks up its own end for
// lastFetchedEpoch with EndOffsetForEpoch, giving (epoch', end).
//   - No answer (the lineage is empty or lastFetchedEpoch is above the
//     leader's latest epoch), or fetchOffset below logStart whether or not
//     the logs diverge: FetchOutOfRange.
//   - epoch' < lastFetchedEpoch (the leader never had that epoch) or
//     end < fetchOffset (the follower has data of that epoch the leader does
//     not): FetchDiverging with (epoch', end), from which the follower
//     computes its truncation point (TruncationPoint).
//   - Otherwise FetchFromOffset.
//
// A fetch without LastFetchedEpoch (the follower's lineage is empty, or an
// older Fetch version) is not checked; the caller serves it.
func CheckFetch(lineage []base.EpochStart, logStart, logEnd base.Offset, lastFetchedEpoch base.Epoch, fetchOffset base.Offset) FetchCheck {
	epoch, end, ok := EndOffsetForEpoch(lineage, logEnd, lastFetchedEpoch)
	if !ok || fetchOffset < logStart {
		return FetchCheck{Verdict: FetchOutOfRange}
	}
	if epoch < lastFetchedEpoch || end < fetchOffset {
		return FetchCheck{Verdict: FetchDiverging, Diverging: EpochEnd{Epoch: epoch, End: end}}
	}
	return FetchCheck{Verdict: FetchFromOffset}
}
