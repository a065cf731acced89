package remotemeta

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// SegmentID identifies one copy attempt of one segment: a fresh random
// 16-byte id per attempt, so a retried upload never reuses the objects or
// the metadata of a failed one.
type SegmentID [16]byte

// IsZero reports whether id is the all-zero (absent) id.
func (id SegmentID) IsZero() bool { return id == SegmentID{} }

func (id SegmentID) String() string { return hex.EncodeToString(id[:]) }

// RemoteSegment is the metadata of one copy attempt, as the metadata
// quorum holds it. Only State changes over its life; the slices are never
// mutated after construction, so copies may share them.
type RemoteSegment struct {
	ID      SegmentID
	TopicID base.TopicID // object keys include it: a re-created topic never shares objects
	TP      base.TopicPartition
	Range   base.Range // [base offset, next offset), never empty
	// LeaderEpochs is the segment's leader-epoch lineage: the first entry
	// starts at Range.Start, all start inside Range, ascending.
	LeaderEpochs   []base.EpochStart
	SizeBytes      int64
	MaxTimestampMs int64
	State          State
}

// ErrInvalidTransition classifies every *TransitionError.
var ErrInvalidTransition = errors.New("remotemeta: invalid remote segment state transition")

// TransitionError is a refused state change. It is an operational error
// when it comes from applying a metadata record (a fenced or confused
// writer), so it is typed rather than a panic.
type TransitionError struct {
	ID       SegmentID
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("%v: segment %v %v -> %v", ErrInvalidTransition, e.ID, e.From, e.To)
}

func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }

// Transition returns s in state to, or a *TransitionError if the table
// does not allow the change.
func (s RemoteSegment) Transition(to State) (RemoteSegment, error) {
	if !ValidTransition(s.State, to) {
		return s, &TransitionError{ID: s.ID, From: s.State, To: to}
	}
	s.State = to
	return s, nil
}

// SameAttempt reports whether s and o describe the same copy attempt:
// equal in everything but State. An update of a known segment must be.
func (s RemoteSegment) SameAttempt(o RemoteSegment) bool {
	return s.ID == o.ID && s.TopicID == o.TopicID && s.TP == o.TP && s.Range == o.Range &&
		s.SizeBytes == o.SizeBytes && s.MaxTimestampMs == o.MaxTimestampMs &&
		slices.Equal(s.LeaderEpochs, o.LeaderEpochs)
}

// ErrInvalidSegment classifies every error of Validate.
var ErrInvalidSegment = errors.New("remotemeta: invalid remote segment")

// Validate checks the invariants of one segment's metadata. It is the
// gateway check for metadata that enters the quorum or is read from it.
func (s RemoteSegment) Validate() error {
	switch {
	case s.ID.IsZero():
		return fmt.Errorf("%w: zero id", ErrInvalidSegment)
	case !s.State.Valid():
		return fmt.Errorf("%w: %v: state %v", ErrInvalidSegment, s.ID, s.State)
	case s.Range.Start < 0 || s.Range.Empty():
		return fmt.Errorf("%w: %v: range %v", ErrInvalidSegment, s.ID, s.Range)
	case s.SizeBytes < 0:
		return fmt.Errorf("%w: %v: size %d", ErrInvalidSegment, s.ID, s.SizeBytes)
	case len(s.LeaderEpochs) == 0 || s.LeaderEpochs[0].Start != s.Range.Start:
		return fmt.Errorf("%w: %v: leader epochs %v do not start at %d", ErrInvalidSegment, s.ID, s.LeaderEpochs, s.Range.Start)
	}
	for i, e := range s.LeaderEpochs {
		if e.Epoch < 0 || !s.Range.Contains(e.Start) {
			return fmt.Errorf("%w: %v: leader epoch %v outside %v", ErrInvalidSegment, s.ID, e, s.Range)
		}
		if i > 0 && (e.Epoch <= s.LeaderEpochs[i-1].Epoch || e.Start <= s.LeaderEpochs[i-1].Start) {
			return fmt.Errorf("%w: %v: leader epochs %v not ascending", ErrInvalidSegment, s.ID, s.LeaderEpochs)
		}
	}
	return nil
}
