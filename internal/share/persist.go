package share

import (
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// StateBatch is a persisted range of one state (WriteShareGroupState's
// StateBatches, whose LastOffset is Offsets.End-1).
type StateBatch struct {
	Offsets    base.Range
	State      State // Available, Acknowledged or Archived
	Deliveries int16
}

// Persisted is the durable form of a share-partition: its start offset and
// its in-flight ranges.
type Persisted struct {
	Start   base.Offset
	Batches []StateBatch
}

// Snapshot is the state to persist. Acquired records are written as
// Available with their delivery count: locks do not survive a move of the
// share-partition's leader, the records are delivered again.
func (p *Partition) Snapshot() Persisted {
	s := Persisted{Start: p.start}
	for _, r := range p.runs {
		b := StateBatch{Offsets: r.Offsets, State: r.State, Deliveries: r.Deliveries}
		if b.State == Acquired {
			b.State = Available
		}
		if n := len(s.Batches); n > 0 && s.Batches[n-1].State == b.State && s.Batches[n-1].Deliveries == b.Deliveries {
			s.Batches[n-1].Offsets.End = b.Offsets.End
			continue
		}
		s.Batches = append(s.Batches, b)
	}
	return s
}

// Restore rebuilds a share-partition from its persisted state. Batches
// below Start are dropped; offsets between batches were never delivered.
func Restore(s Persisted) (*Partition, error) {
	if s.Start < 0 {
		return nil, fmt.Errorf("share: persisted start offset %d", s.Start)
	}
	p := New(s.Start)
	prevEnd := base.Offset(0)
	for i, b := range s.Batches {
		switch {
		case b.Offsets.Empty():
			return nil, fmt.Errorf("share: persisted batch %d has no offsets: %v", i, b.Offsets)
		case b.State != Available && b.State != Acknowledged && b.State != Archived:
			return nil, fmt.Errorf("share: persisted batch %d %v in state %s", i, b.Offsets, b.State)
		case b.Deliveries < 0:
			return nil, fmt.Errorf("share: persisted batch %d %v delivered %d times", i, b.Offsets, b.Deliveries)
		case b.Offsets.Start < prevEnd:
			return nil, fmt.Errorf("share: persisted batch %d %v overlaps or precedes the one before", i, b.Offsets)
		}
		prevEnd = b.Offsets.End
		if b.Offsets.End <= p.start {
			continue
		}
		from := max(b.Offsets.Start, p.start)
		if from > p.end {
			p.runs = append(p.runs, Run{Offsets: base.Range{Start: p.end, End: from}, State: Available})
		}
		p.runs = append(p.runs, Run{Offsets: base.Range{Start: from, End: b.Offsets.End}, State: b.State, Deliveries: b.Deliveries})
		p.end = b.Offsets.End
	}
	p.normalize()
	return p, nil
}
