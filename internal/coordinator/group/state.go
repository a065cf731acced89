package group

import (
	"fmt"
	"time"
)

// groupState is a classic group's lifecycle. The zero value is invalid.
type groupState uint8

const (
	// stateEmpty: no members; offsets may remain. A join starts a rebalance.
	stateEmpty groupState = iota + 1
	// statePreparingRebalance: members are (re)joining; the join phase ends
	// when all known members joined or the rebalance timeout passes.
	statePreparingRebalance
	// stateCompletingRebalance: join responses are out; waiting for the
	// leader's SyncGroup with the assignment.
	stateCompletingRebalance
	// stateStable: the assignment is persisted and handed out.
	stateStable
	// stateDead: the group is being removed; it is never kept in the map.
	stateDead
)

var stateNames = [...]string{
	stateEmpty:               "Empty",
	statePreparingRebalance:  "PreparingRebalance",
	stateCompletingRebalance: "CompletingRebalance",
	stateStable:              "Stable",
	stateDead:                "Dead",
}

// String returns Kafka's name for the state, as DescribeGroups and ListGroups
// report it.
func (s groupState) String() string {
	if s == 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("groupState(%d)", uint8(s))
	}
	return stateNames[s]
}

// validTransition is Kafka's table of previous states for each state.
func validTransition(from, to groupState) bool {
	switch to {
	case statePreparingRebalance:
		return from == stateStable || from == stateCompletingRebalance || from == stateEmpty
	case stateCompletingRebalance:
		return from == statePreparingRebalance
	case stateStable:
		return from == stateCompletingRebalance
	case stateEmpty:
		return from == statePreparingRebalance
	case stateDead:
		return from != 0
	}
	return false
}

// deadline is an optional point in time: a timer that Tick checks.
type deadline struct {
	at    time.Time
	armed bool
}

func armAt(t time.Time) deadline { return deadline{at: t, armed: true} }

// passed reports whether the timer is armed and now is at or after it.
func (d deadline) passed(now time.Time) bool { return d.armed && !now.Before(d.at) }

// timerScan is one Tick's pass over the timers: which are due at now, and
// the soonest still ahead, when the runtime ticks again
// (runtime.Result.WakeAt): a session or rebalance timeout then fires when
// due, as Kafka's do, not at the next periodic tick.
type timerScan struct {
	now     time.Time
	soonest time.Time
}

// due reports whether d is armed and has passed; one armed and still ahead
// may be the soonest.
func (s *timerScan) due(d deadline) bool {
	switch {
	case !d.armed:
		return false
	case d.passed(s.now):
		return true
	case s.soonest.IsZero() || d.at.Before(s.soonest):
		s.soonest = d.at
	}
	return false
}
