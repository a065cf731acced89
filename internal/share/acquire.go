package share

import (
	"time"

	"github.com/strata-broker/strata/internal/base"
)

// AcquireMode is ShareFetch v2's ShareAcquireMode (KIP-1206).
type AcquireMode int8

const (
	// BatchOptimized takes whole log batches and stops before the batch
	// that would start past MaxRecords (the only mode before v2).
	BatchOptimized AcquireMode = 0
	// RecordLimit takes at most MaxRecords offsets, splitting a batch.
	RecordLimit AcquireMode = 1
)

// Acquisition is a range of offsets locked for a member by one Acquire,
// all delivered the same number of times (ShareFetch's AcquiredRecords,
// whose LastOffset is Offsets.End-1).
type Acquisition struct {
	Offsets    base.Range
	Deliveries int16
}

// Read is what one read of the log from From returned: its batches, in
// order, each ending past From. Offsets between From and the first batch,
// and between batches, hold no record (compacted away, or never written):
// they are acquired with the batch after them and the client acknowledges
// them as gaps, so that no offset the log does not hold stays Available.
type Read struct {
	From    base.Offset
	Batches []base.Range
}

// Acquire locks for member what the read holds that is Available or new,
// as the package doc says, and returns the acquired ranges in offset order.
// The read must start at or before NextFetch() (a read from NextFetch()
// does); MaxInFlight bounds only new offsets, so records released inside
// the window are redelivered even when it is full.
func (p *Partition) Acquire(member string, read Read, maxRecords int64, mode AcquireMode, lim Limits, now time.Time) []Acquisition {
	if member == "" || maxRecords <= 0 {
		return nil
	}
	a := acquirer{p: p, member: member, deadline: now.Add(lim.LockDuration), left: maxRecords, mode: mode, maxInFlight: lim.MaxInFlight,
		deliveryLimit: lim.DeliveryLimit}
	prevEnd := read.From
	for _, b := range read.Batches {
		span := base.Range{Start: max(prevEnd, p.start), End: b.End}
		prevEnd = max(prevEnd, b.End)
		if span.Empty() {
			continue
		}
		if a.left <= 0 || !a.take(span) {
			break
		}
	}
	p.normalize()
	return mergeAcquisitions(a.got)
}

type acquirer struct {
	p             *Partition
	member        string
	deadline      time.Time
	left          int64
	mode          AcquireMode
	maxInFlight   int64
	deliveryLimit int16
	got           []Acquisition
	// stopped is set by a throttled acquisition (throttle): nothing more
	// is acquired in this call.
	stopped bool
}

// take acquires what it may of one batch's span; false stops the read
// (the in-flight window is full).
func (a *acquirer) take(span base.Range) bool {
	if inside := (base.Range{Start: span.Start, End: min(span.End, a.p.end)}); !inside.Empty() {
		a.takeInFlight(inside)
	}
	if a.stopped {
		return false
	}
	if span.End <= a.p.end || (a.mode == RecordLimit && a.left <= 0) {
		return true
	}
	if a.p.end-a.p.start >= base.Offset(a.maxInFlight) {
		return false
	}
	fresh := base.Range{Start: a.p.end, End: span.End}
	if a.mode == RecordLimit {
		fresh.End = min(fresh.End, fresh.Start+base.Offset(a.left))
	}
	a.p.runs = append(a.p.runs, Run{Offsets: fresh, State: Acquired, Deliveries: 1, Member: a.member, Deadline: a.deadline})
	a.p.end = fresh.End
	a.left -= fresh.Len()
	a.got = append(a.got, Acquisition{Offsets: fresh, Deliveries: 1})
	return true
}

// takeInFlight acquires the Available offsets of r, which lies in [Start,
// End), throttling those delivered many times already (throttle).
func (a *acquirer) takeInFlight(r base.Range) {
	a.p.split(r.Start)
	a.p.split(r.End)
	for i := 0; i < len(a.p.runs); i++ {
		run := &a.p.runs[i]
		if run.State != Available || run.Offsets.End <= r.Start || run.Offsets.Start >= r.End {
			continue
		}
		if a.mode == RecordLimit && a.left <= 0 {
			return
		}
		take := run.Offsets.Len()
		if a.mode == RecordLimit {
			take = min(take, a.left)
		}
		if allow, throttled := throttle(run.Deliveries, r.Len(), a.deliveryLimit); throttled {
			if len(a.got) > 0 {
				a.stopped = true
				return
			}
			take, a.stopped = min(take, allow), true
		}
		if take < run.Offsets.Len() {
			a.p.split(run.Offsets.Start + base.Offset(take))
			run = &a.p.runs[i]
		}
		run.State, run.Member, run.Deadline = Acquired, a.member, a.deadline
		run.Deliveries++
		a.left -= run.Offsets.Len()
		a.got = append(a.got, Acquisition{Offsets: run.Offsets, Deliveries: run.Deliveries})
		if a.stopped {
			return
		}
	}
}

// throttle is Kafka 4.2's isolation of records that keep failing (a batch
// delivered again and again because one of its records breaks its
// consumers): records delivered at least max(2, ceil(limit/2)) times are
// acquired only as the first thing of an acquisition, and then at most
// max(1, n >> (deliveries - that + 1)) of them (n: the offsets of their log
// batch), so the batch goes out in halves, quarters, ...; a record's last
// delivery (limit - 1 before it, when the limit is over 2) goes out alone.
// Only the bad record then reaches the limit and is archived.
func throttle(deliveries int16, n int64, limit int16) (allow int64, throttled bool) {
	at := max(2, (limit+1)/2)
	switch {
	case limit > 2 && deliveries == limit-1:
		return 1, true
	case deliveries >= at:
		return max(1, n>>(deliveries-at+1)), true
	}
	return 0, false
}

func mergeAcquisitions(got []Acquisition) []Acquisition {
	out := got[:0]
	for _, g := range got {
		if n := len(out); n > 0 && out[n-1].Offsets.End == g.Offsets.Start && out[n-1].Deliveries == g.Deliveries {
			out[n-1].Offsets.End = g.Offsets.End
			continue
		}
		out = append(out, g)
	}
	return out
}
