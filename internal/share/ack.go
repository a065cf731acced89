package share

import (
	"fmt"
	"sort"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// AckType is an acknowledgement type of ShareFetch and ShareAcknowledge.
type AckType int8

const (
	AckGap     AckType = 0 // no record at the offset: archived
	AckAccept  AckType = 1 // processed: acknowledged
	AckRelease AckType = 2 // give it back: available again, or archived at the delivery limit
	AckReject  AckType = 3 // unprocessable: archived
	AckRenew   AckType = 4 // still working on it: the lock is extended (ShareFetch/ShareAcknowledge v2)
)

// Ack acknowledges the offsets of a range: with one type for all of them,
// or one type per offset (len(Types) == Offsets.Len()).
type Ack struct {
	Offsets base.Range
	Types   []AckType
}

// ValidateAcks checks a partition's acknowledgement batches as a request
// carries them: each non-empty, with one type or one per offset, each type
// at most maxType, in ascending order without overlap.
func ValidateAcks(acks []Ack, maxType AckType) error {
	prevEnd := base.Offset(0) // offsets are not negative, so the first ack passes
	for _, a := range acks {
		switch {
		case a.Offsets.Empty() || a.Offsets.Start < 0:
			return fmt.Errorf("%w: offsets %v", ErrInvalidAcknowledgement, a.Offsets)
		case len(a.Types) != 1 && int64(len(a.Types)) != a.Offsets.Len():
			return fmt.Errorf("%w: %d types for %d offsets", ErrInvalidAcknowledgement, len(a.Types), a.Offsets.Len())
		case a.Offsets.Start < prevEnd:
			return fmt.Errorf("%w: offsets %v overlap or precede the batch before", ErrInvalidAcknowledgement, a.Offsets)
		}
		for _, t := range a.Types {
			if t < AckGap || t > maxType {
				return fmt.Errorf("%w: acknowledge type %d", ErrInvalidAcknowledgement, t)
			}
		}
		prevEnd = a.Offsets.End
	}
	return nil
}

// Acknowledge applies member's acknowledgements all or nothing. Offsets
// below Start are done already and are skipped, as Kafka does (a retried
// acknowledgement succeeds); an offset at or past End was never delivered
// (ErrInvalidAcknowledgement); any other offset not Acquired by member
// fails the whole call with ErrInvalidRecordState. On an error nothing
// changes. The acks must have passed ValidateAcks.
func (p *Partition) Acknowledge(member string, acks []Ack, lim Limits, now time.Time) error {
	var segs []typeSegment
	for _, a := range acks {
		if a.Offsets.End > p.end {
			return fmt.Errorf("%w: offsets %v past the last delivered offset %d", ErrInvalidAcknowledgement, a.Offsets, p.end-1)
		}
		for _, seg := range typeSegments(a) {
			seg.offsets.Start = max(seg.offsets.Start, p.start)
			if seg.offsets.Empty() {
				continue
			}
			if !p.heldBy(member, seg.offsets) {
				return fmt.Errorf("%w: offsets %v", ErrInvalidRecordState, seg.offsets)
			}
			segs = append(segs, seg)
		}
	}
	p.applyAll(segs, lim, now)
	p.normalize()
	return nil
}

// heldBy reports whether every offset of r, inside [Start, End), is
// Acquired by member.
func (p *Partition) heldBy(member string, r base.Range) bool {
	for i := p.runAt(r.Start); i < len(p.runs) && p.runs[i].Offsets.Start < r.End; i++ {
		if run := p.runs[i]; run.State != Acquired || run.Member != member {
			return false
		}
	}
	return true
}

// runAt is the index of the run holding off (len(runs) past End).
func (p *Partition) runAt(off base.Offset) int {
	return sort.Search(len(p.runs), func(i int) bool { return p.runs[i].Offsets.End > off })
}

type typeSegment struct {
	offsets base.Range
	typ     AckType
}

// typeSegments splits an ack into ranges of one type.
func typeSegments(a Ack) []typeSegment {
	if len(a.Types) == 1 {
		return []typeSegment{{a.Offsets, a.Types[0]}}
	}
	var segs []typeSegment
	for i, t := range a.Types {
		off := a.Offsets.Start + base.Offset(i)
		if n := len(segs); n > 0 && segs[n-1].typ == t {
			segs[n-1].offsets.End = off + 1
			continue
		}
		segs = append(segs, typeSegment{base.Range{Start: off, End: off + 1}, t})
	}
	return segs
}

// applyAll rewrites the runs with every segment applied, in one pass over
// both (segs ascend without overlap, inside [Start, End), and are held by
// the member): a run a segment covers in part is cut around it. The
// caller normalizes.
func (p *Partition) applyAll(segs []typeSegment, lim Limits, now time.Time) {
	out := p.spare[:0]
	si := 0
	for _, cur := range p.runs {
		for si < len(segs) && segs[si].offsets.Start < cur.Offsets.End && !cur.Offsets.Empty() {
			seg := segs[si]
			if seg.offsets.Start > cur.Offsets.Start {
				before := cur
				before.Offsets.End = seg.offsets.Start
				out = append(out, before)
				cur.Offsets.Start = seg.offsets.Start
			}
			covered := cur
			covered.Offsets.End = min(cur.Offsets.End, seg.offsets.End)
			out = append(out, acknowledged(covered, seg.typ, lim, now))
			cur.Offsets.Start = covered.Offsets.End
			if seg.offsets.End <= covered.Offsets.End {
				si++
			}
		}
		if !cur.Offsets.Empty() {
			out = append(out, cur)
		}
	}
	// The old runs' array is the next call's: steady acknowledgements do
	// not allocate.
	p.runs, p.spare = out, p.runs[:0]
}

// acknowledged is an Acquired run after an acknowledgement of type t.
func acknowledged(run Run, t AckType, lim Limits, now time.Time) Run {
	switch t {
	case AckAccept:
		return Run{Offsets: run.Offsets, State: Acknowledged, Deliveries: run.Deliveries}
	case AckGap, AckReject:
		return Run{Offsets: run.Offsets, State: Archived, Deliveries: run.Deliveries}
	case AckRelease:
		return released(run, lim)
	case AckRenew:
		run.Deadline = now.Add(lim.LockDuration)
		return run
	}
	panic(fmt.Sprintf("share: acknowledge type %d passed ValidateAcks", t))
}

// released is an Acquired run given back: Available, or Archived once it
// was delivered DeliveryLimit times.
func released(r Run, lim Limits) Run {
	state := Available
	if r.Deliveries >= lim.DeliveryLimit {
		state = Archived
	}
	return Run{Offsets: r.Offsets, State: state, Deliveries: r.Deliveries}
}

// ReleaseMember releases every record member holds (it left the group or
// closed its share session). It reports whether anything changed.
func (p *Partition) ReleaseMember(member string, lim Limits) bool {
	return p.releaseWhere(func(r Run) bool { return r.Member == member }, lim)
}

// ExpireLocks releases every record whose lock deadline is not after now.
// It reports whether anything changed.
func (p *Partition) ExpireLocks(now time.Time, lim Limits) bool {
	return p.releaseWhere(func(r Run) bool { return !r.Deadline.After(now) }, lim)
}

func (p *Partition) releaseWhere(match func(Run) bool, lim Limits) bool {
	changed := false
	for i, r := range p.runs {
		if r.State == Acquired && match(r) {
			p.runs[i] = released(r, lim)
			changed = true
		}
	}
	if changed {
		p.normalize()
	}
	return changed
}

// ArchiveAcquired archives what member just acquired in ranges (records
// of aborted transactions, which a read_committed share group must not
// deliver, as Kafka does after acquiring them) and returns acquired
// without those offsets. Offsets of ranges that member does not hold are
// left alone.
func (p *Partition) ArchiveAcquired(member string, ranges []base.Range, acquired []Acquisition) []Acquisition {
	if len(ranges) == 0 {
		return acquired
	}
	for _, r := range ranges {
		r.Start, r.End = max(r.Start, p.start), min(r.End, p.end)
		if r.Empty() {
			continue
		}
		p.split(r.Start)
		p.split(r.End)
		for i := range p.runs {
			run := &p.runs[i]
			if run.Offsets.Start >= r.Start && run.Offsets.End <= r.End && run.State == Acquired && run.Member == member {
				*run = Run{Offsets: run.Offsets, State: Archived, Deliveries: run.Deliveries}
			}
		}
	}
	p.normalize()
	return subtractRanges(acquired, ranges)
}

// subtractRanges is acquired without the offsets of ranges.
func subtractRanges(acquired []Acquisition, ranges []base.Range) []Acquisition {
	var out []Acquisition
	for _, a := range acquired {
		rest := []base.Range{a.Offsets}
		for _, r := range ranges {
			var next []base.Range
			for _, x := range rest {
				if left := (base.Range{Start: x.Start, End: min(x.End, r.Start)}); !left.Empty() {
					next = append(next, left)
				}
				if right := (base.Range{Start: max(x.Start, r.End), End: x.End}); !right.Empty() {
					next = append(next, right)
				}
			}
			rest = next
		}
		for _, x := range rest {
			out = append(out, Acquisition{Offsets: x, Deliveries: a.Deliveries})
		}
	}
	return out
}
