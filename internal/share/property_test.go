package share

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// model is the naive share-partition: one entry per in-flight offset.
type model struct {
	start, end base.Offset
	recs       map[base.Offset]Run // Offsets unused
}

func newModel(start base.Offset) *model {
	return &model{start: start, end: start, recs: map[base.Offset]Run{}}
}

func (m *model) normalize() {
	for m.start < m.end && m.recs[m.start].State.complete() {
		delete(m.recs, m.start)
		m.start++
	}
}

func (m *model) acquire(member string, read Read, maxRecords int64, mode AcquireMode, lim Limits, now time.Time) map[base.Offset]int16 {
	got := map[base.Offset]int16{}
	if maxRecords <= 0 {
		return got
	}
	deadline := now.Add(lim.LockDuration)
	left := maxRecords
	prevEnd := read.From
batches:
	for _, b := range read.Batches {
		from := max(prevEnd, m.start)
		prevEnd = max(prevEnd, b.End)
		if from >= b.End {
			continue
		}
		if left <= 0 {
			break
		}
		checkedWindow := false
		for off := from; off < b.End; off++ {
			if mode == RecordLimit && left <= 0 {
				break
			}
			if off < m.end {
				r := m.recs[off]
				if r.State != Available {
					continue
				}
				allow, throttled := throttle(r.Deliveries, int64(min(b.End, m.end)-from), lim.DeliveryLimit)
				if throttled && len(got) > 0 {
					break batches
				}
				if !throttled {
					allow = 1 << 62
				}
				d := r.Deliveries
				for ; off < min(b.End, m.end) && allow > 0 && !(mode == RecordLimit && left <= 0); off++ {
					r := m.recs[off]
					if r.State != Available || r.Deliveries != d {
						break
					}
					r.State, r.Member, r.Deadline = Acquired, member, deadline
					r.Deliveries++
					m.recs[off] = r
					got[off] = r.Deliveries
					left--
					allow--
				}
				if throttled {
					break batches
				}
				off--
				continue
			}
			if !checkedWindow {
				if m.end-m.start >= base.Offset(lim.MaxInFlight) {
					break batches
				}
				checkedWindow = true
			}
			m.recs[off] = Run{State: Acquired, Deliveries: 1, Member: member, Deadline: deadline}
			m.end = off + 1
			got[off] = 1
			left--
		}
	}
	return got
}

func (m *model) release(off base.Offset, lim Limits) {
	r := m.recs[off]
	state := Available
	if r.Deliveries >= lim.DeliveryLimit {
		state = Archived
	}
	m.recs[off] = Run{State: state, Deliveries: r.Deliveries}
}

func (m *model) acknowledge(member string, acks []Ack, lim Limits, now time.Time) error {
	for _, a := range acks {
		if a.Offsets.End > m.end {
			return ErrInvalidAcknowledgement
		}
		for off := max(a.Offsets.Start, m.start); off < a.Offsets.End; off++ {
			if r := m.recs[off]; r.State != Acquired || r.Member != member {
				return ErrInvalidRecordState
			}
		}
	}
	for _, a := range acks {
		for off := max(a.Offsets.Start, m.start); off < a.Offsets.End; off++ {
			t := a.Types[0]
			if len(a.Types) > 1 {
				t = a.Types[off-a.Offsets.Start]
			}
			r := m.recs[off]
			switch t {
			case AckAccept:
				m.recs[off] = Run{State: Acknowledged, Deliveries: r.Deliveries}
			case AckGap, AckReject:
				m.recs[off] = Run{State: Archived, Deliveries: r.Deliveries}
			case AckRelease:
				m.release(off, lim)
			case AckRenew:
				r.Deadline = now.Add(lim.LockDuration)
				m.recs[off] = r
			}
		}
	}
	m.normalize()
	return nil
}

func (m *model) releaseWhere(match func(Run) bool, lim Limits) {
	for off, r := range m.recs {
		if r.State == Acquired && match(r) {
			m.release(off, lim)
		}
	}
	m.normalize()
}

func (m *model) advanceStart(logStart base.Offset) {
	if logStart <= m.start {
		return
	}
	for off := range m.recs {
		if off < logStart {
			delete(m.recs, off)
		}
	}
	m.start = logStart
	m.end = max(m.end, logStart)
	m.normalize()
}

// assertSame fails unless p holds, offset by offset, what m holds.
func assertSame(t *rapid.T, p *Partition, m *model) {
	p.check()
	if p.Start() != m.start || p.End() != m.end {
		t.Fatalf("partition [%d, %d), model [%d, %d)", p.Start(), p.End(), m.start, m.end)
	}
	for _, r := range p.Runs() {
		for off := r.Offsets.Start; off < r.Offsets.End; off++ {
			want := m.recs[off]
			got := Run{State: r.State, Deliveries: r.Deliveries, Member: r.Member, Deadline: r.Deadline}
			if !got.sameAs(want) {
				t.Fatalf("offset %d: partition %+v, model %+v", off, got, want)
			}
		}
	}
}

var propMembers = []string{"m1", "m2", "m3"}

func drawRead(t *rapid.T, p *Partition, logEnd base.Offset) Read {
	from := p.NextFetch()
	var batches []base.Range
	off := from - base.Offset(rapid.IntRange(0, 2).Draw(t, "before"))
	for off < logEnd && len(batches) < 6 {
		off += base.Offset(rapid.IntRange(0, 2).Draw(t, "gap"))
		n := base.Offset(rapid.IntRange(1, 5).Draw(t, "batch"))
		b := base.Range{Start: off, End: min(off+n, logEnd)}
		if b.Empty() {
			break
		}
		if b.End > from {
			batches = append(batches, b)
		}
		off = b.End
	}
	return Read{From: from, Batches: batches}
}

func drawAcks(t *rapid.T, p *Partition) []Ack {
	var acks []Ack
	off := max(0, p.Start()-base.Offset(rapid.IntRange(0, 3).Draw(t, "ackBefore")))
	for range rapid.IntRange(0, 3).Draw(t, "acks") {
		off += base.Offset(rapid.IntRange(0, 3).Draw(t, "ackGap"))
		n := rapid.IntRange(1, 4).Draw(t, "ackLen")
		types := []AckType{AckType(rapid.IntRange(0, 4).Draw(t, "type"))}
		if rapid.Bool().Draw(t, "perOffset") {
			types = nil
			for range n {
				types = append(types, AckType(rapid.IntRange(0, 4).Draw(t, "type")))
			}
		}
		acks = append(acks, Ack{Offsets: base.Range{Start: off, End: off + base.Offset(n)}, Types: types})
		off += base.Offset(n)
	}
	return acks
}

// Every operation keeps the invariants and agrees with the per-offset model;
// a snapshot restores to the same state with its locks released.
func TestPartitionMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lim := Limits{
			DeliveryLimit: int16(rapid.IntRange(1, 4).Draw(t, "deliveryLimit")),
			LockDuration:  time.Duration(rapid.IntRange(1, 5).Draw(t, "lock")) * time.Second,
			MaxInFlight:   int64(rapid.IntRange(1, 30).Draw(t, "maxInFlight")),
		}
		start := base.Offset(rapid.IntRange(0, 5).Draw(t, "start"))
		p, m := New(start), newModel(start)
		logEnd := start + base.Offset(rapid.IntRange(0, 40).Draw(t, "logEnd"))
		now := time.Unix(1000, 0)
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			member := rapid.SampledFrom(propMembers).Draw(t, "member")
			switch op := rapid.IntRange(0, 6).Draw(t, "op"); op {
			case 0, 1:
				read := drawRead(t, p, logEnd)
				maxRecords := int64(rapid.IntRange(0, 12).Draw(t, "maxRecords"))
				mode := AcquireMode(rapid.IntRange(0, 1).Draw(t, "mode"))
				want := m.acquire(member, read, maxRecords, mode, lim, now)
				got := p.Acquire(member, read, maxRecords, mode, lim, now)
				gotOffsets := map[base.Offset]int16{}
				for i, a := range got {
					if i > 0 && got[i-1].Offsets.End > a.Offsets.Start {
						t.Fatalf("step %d: acquisitions out of order: %v", step, got)
					}
					for off := a.Offsets.Start; off < a.Offsets.End; off++ {
						gotOffsets[off] = a.Deliveries
					}
				}
				if !maps.Equal(gotOffsets, want) {
					t.Fatalf("step %d: acquired %v, model %v (read %+v)", step, got, slices.Sorted(maps.Keys(want)), read)
				}
			case 2, 3:
				acks := drawAcks(t, p)
				if ValidateAcks(acks, AckRenew) != nil {
					t.Fatalf("step %d: drawn acks invalid: %+v", step, acks)
				}
				want := m.acknowledge(member, acks, lim, now)
				err := p.Acknowledge(member, acks, lim, now)
				if !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Fatalf("step %d: acknowledge %+v: %v, model %v", step, acks, err, want)
				}
			case 4:
				m.releaseWhere(func(r Run) bool { return r.Member == member }, lim)
				p.ReleaseMember(member, lim)
			case 5:
				now = now.Add(time.Duration(rapid.IntRange(0, 3).Draw(t, "advance")) * time.Second)
				m.releaseWhere(func(r Run) bool { return !r.Deadline.After(now) }, lim)
				p.ExpireLocks(now, lim)
			case 6:
				to := p.Start() + base.Offset(rapid.IntRange(-2, 6).Draw(t, "logStart"))
				m.advanceStart(to)
				p.AdvanceStart(to)
				logEnd = max(logEnd, to)
			}
			assertSame(t, p, m)
			for _, r := range p.Runs() {
				if r.Deliveries > lim.DeliveryLimit || (r.State == Available && r.Deliveries >= lim.DeliveryLimit) {
					t.Fatalf("step %d: run %+v past the delivery limit %d", step, r, lim.DeliveryLimit)
				}
			}
			assertRestores(t, p)
		}
	})
}

func assertRestores(t *rapid.T, p *Partition) {
	q, err := Restore(p.Snapshot())
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	q.check()
	want := New(p.Start())
	want.end = p.End()
	for _, r := range p.Runs() {
		if r.State == Acquired {
			r = Run{Offsets: r.Offsets, State: Available, Deliveries: r.Deliveries}
		}
		want.runs = append(want.runs, r)
	}
	want.normalize()
	if fmt.Sprint(q.Runs(), q.Start(), q.End()) != fmt.Sprint(want.Runs(), want.Start(), want.End()) {
		t.Fatalf("restored %v [%d, %d), want %v [%d, %d)", q.Runs(), q.Start(), q.End(), want.Runs(), want.Start(), want.End())
	}
}
