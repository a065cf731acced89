package replication

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
)

// Step is what a follower does with its leader's answer for one partition.
type Step uint8

const (
	// StepAppend: append the records (possibly none), then take the
	// leader's high watermark and log start.
	StepAppend Step = iota + 1
	// StepTruncate: the logs diverge; truncate to Truncation.Offset and
	// fetch again (from the new log end, with the new last epoch).
	StepTruncate
	// StepOutOfRange: the fetch offset is outside the leader's log; ask
	// the leader for its log end and start (OutOfRangeReset).
	StepOutOfRange
	// StepFromTier: the fetch offset is in the leader's remote tier,
	// below its local log start (OFFSET_MOVED_TO_TIERED_STORAGE, KIP-405):
	// rebuild the follower's state there from the remote tier
	// (PlanAuxState) and fetch from the leader's local log.
	StepFromTier
	// StepBackoff: the leader cannot serve this partition now (not the
	// leader any more, an epoch mismatch, an unknown topic, a storage
	// error); wait for the next metadata image or the backoff.
	StepBackoff
)

// Answer is a leader's fetch answer for one partition, in Strata's terms.
type Answer struct {
	Err error // nil, or the kerr error of the partition's error code
	// Diverging is set when the leader answered a DivergingEpoch (KIP-320
	// and KIP-595: the follower's last fetched epoch ends earlier on the
	// leader than the follower's fetch offset).
	Diverging *EpochEnd
}

// FollowerState is what the follower knows of its own log when it decides.
type FollowerState struct {
	Lineage       []base.EpochStart
	LogEnd        base.Offset
	HighWatermark base.Offset
}

// Decide turns a leader's answer into the follower's next step, as Kafka's
// AbstractFetcherThread.processFetchRequest does: a diverging epoch leads
// to a truncation (TruncationPoint), OFFSET_OUT_OF_RANGE to a reset from
// the leader's offsets, OFFSET_MOVED_TO_TIERED_STORAGE to a rebuild from
// the remote tier (handleOffsetsMovedToTieredStorage), the errors that a
// new image resolves to a backoff.
func Decide(a Answer, f FollowerState) (Step, Truncation) {
	switch {
	case a.Err == nil && a.Diverging != nil:
		return StepTruncate, TruncationPoint(f.Lineage, f.LogEnd, f.HighWatermark, EpochEndAnswer(*a.Diverging))
	case a.Err == nil:
		return StepAppend, Truncation{}
	case errors.Is(a.Err, kerr.OffsetOutOfRange):
		return StepOutOfRange, Truncation{}
	case errors.Is(a.Err, kerr.OffsetMovedToTieredStorage):
		return StepFromTier, Truncation{}
	default:
		return StepBackoff, Truncation{}
	}
}

// OutOfRangeReset is where a follower resumes after OFFSET_OUT_OF_RANGE,
// given the leader's log end and log start (Kafka's
// AbstractFetcherThread.handleOutOfRangeError / fetchOffsetAndTruncate):
// a leader whose log ends below the follower's (an unclean election made
// it leader) makes the follower truncate to that end; a leader whose log
// starts past the follower's end (retention ran while the follower was
// away) makes the follower start over, empty, at the leader's log start;
// otherwise the follower fetches again from its own end.
func OutOfRangeReset(followerEnd, leaderEnd, leaderStart base.Offset) (truncateTo base.Offset, startOver bool, changed bool) {
	switch {
	case leaderEnd < followerEnd:
		return leaderEnd, false, true
	case leaderStart > followerEnd:
		return leaderStart, true, true
	default:
		return followerEnd, false, false
	}
}
