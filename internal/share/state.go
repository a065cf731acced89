package share

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// State is the delivery state of an in-flight record. The values are the
// ones Kafka persists (ReadShareGroupState/WriteShareGroupState's
// DeliveryState); Acquired is never persisted.
type State int8

const (
	Available    State = 0
	Acquired     State = 1
	Acknowledged State = 2
	Archived     State = 4
)

func (s State) String() string {
	switch s {
	case Available:
		return "available"
	case Acquired:
		return "acquired"
	case Acknowledged:
		return "acknowledged"
	case Archived:
		return "archived"
	}
	return fmt.Sprintf("state(%d)", int8(s))
}

// complete reports whether a record in s is delivered for good.
func (s State) complete() bool { return s == Acknowledged || s == Archived }

// ErrInvalidRecordState is an acknowledgement of a record that the member
// does not hold (not acquired, acquired by another member, or outside the
// in-flight window): Kafka's INVALID_RECORD_STATE.
var ErrInvalidRecordState = errors.New("record is not acquired by this member")

// ErrInvalidAcknowledgement is a malformed acknowledgement batch: Kafka's
// INVALID_REQUEST.
var ErrInvalidAcknowledgement = errors.New("invalid acknowledgement batch")

// Run is a range of offsets in one state.
type Run struct {
	Offsets    base.Range
	State      State
	Deliveries int16     // times delivered (acquired) so far
	Member     string    // the member holding the lock, when Acquired
	Deadline   time.Time // when the lock expires, when Acquired
}

func (r Run) sameAs(o Run) bool {
	return r.State == o.State && r.Deliveries == o.Deliveries && r.Member == o.Member && r.Deadline.Equal(o.Deadline)
}

// Limits are the share group's settings that the state machine applies.
type Limits struct {
	DeliveryLimit int16         // share.delivery.count.limit
	LockDuration  time.Duration // share.record.lock.duration.ms
	MaxInFlight   int64         // share.partition.max.record.locks
}

// Validate reports a limit that the state machine cannot work with.
func (l Limits) Validate() error {
	switch {
	case l.DeliveryLimit < 1:
		return fmt.Errorf("share: delivery limit %d, must be at least 1", l.DeliveryLimit)
	case l.LockDuration <= 0:
		return fmt.Errorf("share: lock duration %v, must be positive", l.LockDuration)
	case l.MaxInFlight < 1:
		return fmt.Errorf("share: max in-flight records %d, must be at least 1", l.MaxInFlight)
	}
	return nil
}

// Partition is the in-flight state of one share-partition.
type Partition struct {
	start base.Offset
	end   base.Offset
	runs  []Run
	// spare is a second array for the runs, which Acknowledge rewrites
	// the runs into (nothing in it is read).
	spare []Run
}

// New is a share-partition that has delivered nothing, starting at start
// (chosen by share.auto.offset.reset when the group first reads it).
func New(start base.Offset) *Partition {
	return &Partition{start: start, end: start}
}

// Start is the share-partition start offset (SPSO).
func (p *Partition) Start() base.Offset { return p.start }

// End is the first offset never acquired (SPEO).
func (p *Partition) End() base.Offset { return p.end }

// Clone is an independent copy of p: what an acknowledgement is applied
// to while its write is in flight, so that a failed write changes nothing.
func (p *Partition) Clone() *Partition {
	return &Partition{start: p.start, end: p.end, runs: append([]Run(nil), p.runs...)}
}

// Runs is a copy of the in-flight runs, covering [Start, End).
func (p *Partition) Runs() []Run { return append([]Run(nil), p.runs...) }

// NextFetch is the offset a fetch for this share group should read from:
// the first Available offset in flight, or End.
func (p *Partition) NextFetch() base.Offset {
	for _, r := range p.runs {
		if r.State == Available {
			return r.Offsets.Start
		}
	}
	return p.end
}

// Completed is how many offsets of [Start, End) are delivered for good
// (Acknowledged or Archived): a share group's lag is the high watermark
// minus Start minus Completed.
func (p *Partition) Completed() int64 {
	var n int64
	for _, r := range p.runs {
		if r.State.complete() {
			n += r.Offsets.Len()
		}
	}
	return n
}

// NextDeadline is the earliest lock deadline, if any record is Acquired.
func (p *Partition) NextDeadline() (time.Time, bool) {
	var first time.Time
	found := false
	for _, r := range p.runs {
		if r.State == Acquired && (!found || r.Deadline.Before(first)) {
			first, found = r.Deadline, true
		}
	}
	return first, found
}

// AdvanceStart drops the in-flight state below logStart, which the log no
// longer holds (retention, DeleteRecords): those records can no longer be
// delivered. It reports whether anything changed.
func (p *Partition) AdvanceStart(logStart base.Offset) bool {
	if logStart <= p.start {
		return false
	}
	p.start = logStart
	if p.end < logStart {
		p.end = logStart
	}
	p.runs = trimBelow(p.runs, logStart)
	p.normalize()
	return true
}

func trimBelow(runs []Run, off base.Offset) []Run {
	i := 0
	for i < len(runs) && runs[i].Offsets.End <= off {
		i++
	}
	runs = runs[i:]
	if len(runs) > 0 && runs[0].Offsets.Start < off {
		runs[0].Offsets.Start = off
	}
	return runs
}

// normalize merges adjacent equal runs and moves Start past the completed
// runs at the front.
func (p *Partition) normalize() {
	merged := p.runs[:0]
	for _, r := range p.runs {
		if r.Offsets.Empty() {
			continue
		}
		if n := len(merged); n > 0 && merged[n-1].sameAs(r) && merged[n-1].Offsets.End == r.Offsets.Start {
			merged[n-1].Offsets.End = r.Offsets.End
			continue
		}
		merged = append(merged, r)
	}
	i := 0
	for i < len(merged) && merged[i].State.complete() {
		i++
	}
	if i > 0 {
		p.start = merged[i-1].Offsets.End
		merged = merged[i:]
	}
	p.runs = merged
	if len(p.runs) == 0 {
		p.start = p.end
	}
}

// split cuts runs at off so that a run starts there (off inside [Start, End]).
func (p *Partition) split(off base.Offset) {
	for i, r := range p.runs {
		if r.Offsets.Start < off && off < r.Offsets.End {
			left, right := r, r
			left.Offsets.End, right.Offsets.Start = off, off
			p.runs = append(p.runs[:i+1], p.runs[i:]...)
			p.runs[i], p.runs[i+1] = left, right
			return
		}
	}
}

// check panics if an invariant of the package doc does not hold; tests
// call it after every operation.
func (p *Partition) check() {
	if p.start > p.end {
		panic(fmt.Sprintf("share: start %d past end %d", p.start, p.end))
	}
	next := p.start
	for i, r := range p.runs {
		if r.Offsets.Start != next || r.Offsets.Empty() {
			panic(fmt.Sprintf("share: run %d %v does not follow %d", i, r.Offsets, next))
		}
		if i > 0 && p.runs[i-1].sameAs(r) {
			panic(fmt.Sprintf("share: runs %d and %d are not merged", i-1, i))
		}
		if (r.State == Acquired) != (r.Member != "") || (r.State == Acquired) == r.Deadline.IsZero() {
			panic(fmt.Sprintf("share: run %v %s with member %q deadline %v", r.Offsets, r.State, r.Member, r.Deadline))
		}
		next = r.Offsets.End
	}
	if next != p.end {
		panic(fmt.Sprintf("share: runs end at %d, end is %d", next, p.end))
	}
	if len(p.runs) > 0 && p.runs[0].State.complete() {
		panic(fmt.Sprintf("share: first run %v is %s", p.runs[0].Offsets, p.runs[0].State))
	}
}
