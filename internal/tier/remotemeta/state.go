package remotemeta

import (
	"fmt"
	"slices"
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

// String is the state's Kafka name (RemoteLogSegmentState), e.g. "COPY_STARTED".
func (s State) String() string {
	if s.Valid() {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ParseState is the inverse of String for the valid states; ok is false
// for any other name. Stored metadata names states by string, so that the
// numbering of the constants never becomes a storage format.
func ParseState(name string) (s State, ok bool) {
	i := slices.Index(stateNames[:], name)
	if i < 0 || !State(i).Valid() {
		return 0, false
	}
	return State(i), true
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

// ValidTransition reports whether the table allows a segment in state from
// to move to state to. Invalid states have no transitions.
func ValidTransition(from, to State) bool {
	return slices.Contains(transitions[from], to)
}
