package replication

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// AnswerKind says which parts of a leader's epoch-end answer are defined.
// The zero value is invalid.
type AnswerKind uint8

const (
	// AnswerUndefined: the leader knows no end for the epoch
	// (UNDEFINED_EPOCH_OFFSET on the wire).
	AnswerUndefined AnswerKind = iota + 1
	// AnswerOffsetOnly: an end offset without an epoch (UNDEFINED_EPOCH on
	// the wire, as OffsetForLeaderEpoch v0 answers).
	AnswerOffsetOnly
	// AnswerEpochEnd: both the epoch and its end offset.
	AnswerEpochEnd
)

// LeaderAnswer is the leader's answer about the follower's latest epoch: an
// OffsetForLeaderEpoch response, or a Fetch response's DivergingEpoch (which
// is always an AnswerEpochEnd). Build one with UndefinedAnswer,
// OffsetOnlyAnswer or EpochEndAnswer.
type LeaderAnswer struct {
	Kind AnswerKind
	// EpochEnd.Epoch is meaningful for AnswerEpochEnd, EpochEnd.End for
	// AnswerOffsetOnly and AnswerEpochEnd.
	EpochEnd EpochEnd
}

// UndefinedAnswer is a leader answer with neither epoch nor end offset.
func UndefinedAnswer() LeaderAnswer { return LeaderAnswer{Kind: AnswerUndefined} }

// OffsetOnlyAnswer is a leader answer with an end offset but no epoch.
func OffsetOnlyAnswer(end base.Offset) LeaderAnswer {
	return LeaderAnswer{Kind: AnswerOffsetOnly, EpochEnd: EpochEnd{End: end}}
}

// EpochEndAnswer is a leader answer with an epoch and its end offset.
func EpochEndAnswer(e EpochEnd) LeaderAnswer { return LeaderAnswer{Kind: AnswerEpochEnd, EpochEnd: e} }

// Truncation is where a follower truncates its log: to Offset (exclusive:
// the new log end). Completed is false when Offset is only a step: the
// follower truncates there and asks the leader again about its new latest
// epoch (with OffsetForLeaderEpoch, or with the LastFetchedEpoch of its next
// fetch).
type Truncation struct {
	Offset    base.Offset
	Completed bool
}

// TruncationPoint is where a follower with the given lineage, log end and
// high watermark truncates after the leader's answer about its latest epoch,
// Kafka's AbstractFetcherThread.getOffsetTruncationState (KIP-101, KIP-279):
//   - no end offset in the answer: truncate to the high watermark, which is
//     all the follower knows to be committed; done;
//   - an end offset without an epoch: truncate to min(that end, log end); done;
//   - otherwise look up the answer's epoch in the follower's own lineage
//     (EndOffsetForEpoch): if the follower's epoch found differs from the
//     leader's, the follower never had the leader's epoch, so it truncates to
//     min(its end for the epoch it has, log end) and asks again; if they
//     match, it truncates to min(its end for the epoch, the leader's end, log
//     end); done. If the follower knows no such epoch (its lineage is empty,
//     or the epoch is above its latest), min(the leader's end, log end); done.
//
// When the follower then truncates its lineage as Kafka's UnifiedLog does
// (TruncateLineage with min(Offset, log end)) and keeps asking, this reaches
// the first offset where the two logs differ in at most one round per epoch
// in the follower's lineage, plus one (the KIP-279 guarantee; the property
// test simulates it).
//
// TruncationPoint panics if hw > logEnd.
func TruncationPoint(lineage []base.EpochStart, logEnd, hw base.Offset, leader LeaderAnswer) Truncation {
	if hw > logEnd {
		panic(fmt.Sprintf("replication: follower high watermark %d above its log end %d", hw, logEnd))
	}
	switch leader.Kind {
	case AnswerUndefined:
		return Truncation{Offset: hw, Completed: true}
	case AnswerOffsetOnly:
		return Truncation{Offset: min(leader.EpochEnd.End, logEnd), Completed: true}
	case AnswerEpochEnd:
	default:
		panic(fmt.Sprintf("replication: leader answer of kind %d", leader.Kind))
	}
	epoch, end, ok := EndOffsetForEpoch(lineage, logEnd, leader.EpochEnd.Epoch)
	switch {
	case !ok:
		return Truncation{Offset: min(leader.EpochEnd.End, logEnd), Completed: true}
	case epoch != leader.EpochEnd.Epoch:
		return Truncation{Offset: min(end, logEnd), Completed: false}
	default:
		return Truncation{Offset: min(end, leader.EpochEnd.End, logEnd), Completed: true}
	}
}
