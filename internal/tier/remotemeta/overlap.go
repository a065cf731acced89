package remotemeta

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// EpochsFor restricts lineage l to r: the epoch in force at r.Start, moved
// to start there, then every epoch that starts inside r. ok is false when
// r starts below l's first Start (l cannot say which epoch wrote it).
// l must be ascending in both Epoch and Start.
func EpochsFor(l []base.EpochStart, r base.Range) ([]base.EpochStart, bool) {
	if len(l) == 0 || r.Start < l[0].Start {
		return nil, false
	}
	i, _ := slices.BinarySearchFunc(l, r.Start, func(x base.EpochStart, o base.Offset) int { return cmp.Compare(x.Start, o) })
	if i == len(l) || l[i].Start > r.Start {
		i-- // the epoch in force at r.Start started before it
	}
	out := []base.EpochStart{{Epoch: l[i].Epoch, Start: r.Start}}
	for _, e := range l[i+1:] {
		if e.Start >= r.End {
			break
		}
		out = append(out, e)
	}
	return out, true
}

// tieredTwice reports whether a and b overlap and carry the same epochs
// over the offsets they share. Two COPY_FINISHED segments that overlap and
// share their history would both be in any lineage that holds one of them:
// the same offsets tiered twice.
func tieredTwice(a, b RemoteSegment) bool {
	overlap := base.Range{Start: max(a.Range.Start, b.Range.Start), End: min(a.Range.End, b.Range.End)}
	if overlap.Empty() {
		return false
	}
	ea, _ := EpochsFor(a.LeaderEpochs, overlap)
	eb, _ := EpochsFor(b.LeaderEpochs, overlap)
	return slices.Equal(ea, eb)
}

// ErrOverlap classifies every *OverlapError.
var ErrOverlap = errors.New("remotemeta: COPY_FINISHED segments overlap in one epoch history")

// OverlapError is a COPY_FINISHED segment that would tier offsets that
// another COPY_FINISHED segment of the partition already tiers, with the
// same epoch history. Like a *TransitionError it is an operational error
// when it comes from applying a metadata record, so it is typed.
type OverlapError struct {
	ID, Other         SegmentID
	Range, OtherRange base.Range
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("%v: %v %v and %v %v", ErrOverlap, e.ID, e.Range, e.Other, e.OtherRange)
}

func (e *OverlapError) Unwrap() error { return ErrOverlap }

// ConflictsWith is the one rule for the invariant that no two COPY_FINISHED
// segments of a partition overlap with the same epoch history (DESIGN §4):
// it returns an *OverlapError when s, as a COPY_FINISHED segment, would
// break it against a COPY_FINISHED segment of segs, and nil otherwise.
// Segments of segs in another state, and s's own entry (same ID), are
// skipped, so segs may be the partition's whole metadata. Overlapping
// segments with different epoch histories do not conflict: they are
// copies of diverged logs, and no lineage holds both. All segments must be
// of one partition and valid (Validate).
func ConflictsWith(segs []RemoteSegment, s RemoteSegment) error {
	for _, f := range segs {
		if f.State != CopyFinished || f.ID == s.ID {
			continue
		}
		if tieredTwice(f, s) {
			return &OverlapError{ID: s.ID, Range: s.Range, Other: f.ID, OtherRange: f.Range}
		}
	}
	return nil
}
