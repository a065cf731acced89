package tier

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// State is where one remote segment copy attempt is in its lifecycle
// (DESIGN §4). The zero value is invalid.
type State int

const (
	// CopyStarted is written before any object of the attempt is uploaded,
	// so every object in the bucket has metadata that names it.
	CopyStarted State = iota + 1
	// CopyFinished: every object is uploaded; the segment is part of the
	// remote tier and serves reads.
	CopyFinished
	// DeleteStarted is written before any object is deleted.
	DeleteStarted
	// DeleteFinished is terminal: no object of the attempt is left.
	DeleteFinished
	// Dangling: a copy or a delete failed and objects may be left. Not
	// terminal: every pass retries the delete until DeleteFinished.
	Dangling
)

var stateNames = [...]string{
	CopyStarted:    "COPY_STARTED",
	CopyFinished:   "COPY_FINISHED",
	DeleteStarted:  "DELETE_STARTED",
	DeleteFinished: "DELETE_FINISHED",
	Dangling:       "DANGLING",
}

// Valid reports whether s is one of the named states.
func (s State) Valid() bool { return s >= CopyStarted && s <= Dangling }

func (s State) String() string {
	if s.Valid() {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// transitions is the one table of allowed state changes (DESIGN §4):
//
//	COPY_STARTED ──► COPY_FINISHED ──► DELETE_STARTED ──► DELETE_FINISHED
//	     │                                  ▲   │
//	     └──────────► DANGLING ─────────────┘   └──► DANGLING
//
// A state never transitions to itself: a write that repeats the current
// state is a bug in the writer, not a retry.
var transitions = map[State][]State{
	CopyStarted:   {CopyFinished, Dangling},
	CopyFinished:  {DeleteStarted},
	Dangling:      {DeleteStarted},
	DeleteStarted: {DeleteFinished, Dangling},
}

func validTransition(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// SegmentID identifies one copy attempt of one segment: a fresh random
// 16-byte id per attempt, so a retried upload never reuses the objects or
// the metadata of a failed one.
type SegmentID [16]byte

// IsZero reports whether id is the all-zero (absent) id.
func (id SegmentID) IsZero() bool { return id == SegmentID{} }

func (id SegmentID) String() string { return hex.EncodeToString(id[:]) }

// EpochStart says that leader epoch Epoch begins at offset Start. A
// lineage is a list of them, ascending in both Epoch and Start; each epoch
// covers offsets up to the next one's Start, and the last one has no end.
type EpochStart struct {
	Epoch base.Epoch
	Start base.Offset
}

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
	LeaderEpochs   []EpochStart
	SizeBytes      int64
	MaxTimestampMs int64
	State          State
}

// ErrInvalidTransition classifies every *TransitionError.
var ErrInvalidTransition = errors.New("tier: invalid remote segment state transition")

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
	if !validTransition(s.State, to) {
		return s, &TransitionError{ID: s.ID, From: s.State, To: to}
	}
	s.State = to
	return s, nil
}

var errInvalidSegment = errors.New("tier: invalid remote segment")

// Validate checks the invariants of one segment's metadata. It is the
// gateway check for metadata read from the quorum.
func (s RemoteSegment) Validate() error {
	switch {
	case s.ID.IsZero():
		return fmt.Errorf("%w: zero id", errInvalidSegment)
	case !s.State.Valid():
		return fmt.Errorf("%w: %v: state %v", errInvalidSegment, s.ID, s.State)
	case s.Range.Start < 0 || s.Range.Empty():
		return fmt.Errorf("%w: %v: range %v", errInvalidSegment, s.ID, s.Range)
	case s.SizeBytes < 0:
		return fmt.Errorf("%w: %v: size %d", errInvalidSegment, s.ID, s.SizeBytes)
	case len(s.LeaderEpochs) == 0 || s.LeaderEpochs[0].Start != s.Range.Start:
		return fmt.Errorf("%w: %v: leader epochs %v do not start at %d", errInvalidSegment, s.ID, s.LeaderEpochs, s.Range.Start)
	}
	for i, e := range s.LeaderEpochs {
		if e.Epoch < 0 || !s.Range.Contains(e.Start) {
			return fmt.Errorf("%w: %v: leader epoch %v outside %v", errInvalidSegment, s.ID, e, s.Range)
		}
		if i > 0 && (e.Epoch <= s.LeaderEpochs[i-1].Epoch || e.Start <= s.LeaderEpochs[i-1].Start) {
			return fmt.Errorf("%w: %v: leader epochs %v not ascending", errInvalidSegment, s.ID, s.LeaderEpochs)
		}
	}
	return nil
}
