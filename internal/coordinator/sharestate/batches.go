package sharestate

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// deliveryState is a record's delivery state as a partition leader persists
// it, with Kafka's byte for it (RecordState.id). The bytes matter: the
// combining rule ranks states by them. Acquired (1) and archiving (3) are
// never persisted, so they are not valid here.
type deliveryState int8

const (
	stateAvailable    deliveryState = 0
	stateAcknowledged deliveryState = 2
	stateArchived     deliveryState = 4
)

func (s deliveryState) valid() bool {
	return s == stateAvailable || s == stateAcknowledged || s == stateArchived
}

// stateBatch is a run of offsets that share one delivery state and count.
// Offsets is half-open and never empty; requests, responses and records
// carry it as FirstOffset and LastOffset, both inclusive.
type stateBatch struct {
	Offsets    base.Range
	State      deliveryState
	Deliveries int16
}

// batchFromWire validates an inclusive wire batch at the gateway (a request
// or a record), so that everything inside holds non-empty ranges of
// non-negative offsets whose exclusive end does not overflow.
func batchFromWire(first, last int64, state int8, deliveries int16) (stateBatch, error) {
	switch {
	case first < 0:
		return stateBatch{}, fmt.Errorf("state batch starts at offset %d", first)
	case last < first:
		return stateBatch{}, fmt.Errorf("state batch [%d, %d] ends before it starts", first, last)
	case last == math.MaxInt64:
		return stateBatch{}, fmt.Errorf("state batch ends at offset %d", last)
	case !deliveryState(state).valid():
		return stateBatch{}, fmt.Errorf("state batch [%d, %d] has delivery state %d", first, last, state)
	case deliveries < 0:
		return stateBatch{}, fmt.Errorf("state batch [%d, %d] has delivery count %d", first, last, deliveries)
	}
	return stateBatch{
		Offsets:    base.Range{Start: base.Offset(first), End: base.Offset(last + 1)},
		State:      deliveryState(state),
		Deliveries: deliveries,
	}, nil
}

// firstOffset and lastOffset are the inclusive bounds of the wire.
func (b stateBatch) firstOffset() int64 { return int64(b.Offsets.Start) }
func (b stateBatch) lastOffset() int64  { return int64(b.Offsets.End) - 1 }

// outranks reports whether b's delivery wins over o's on the offsets they
// share. Kafka's PersisterStateBatchCombiner keeps the higher delivery
// count and, on equal counts, the higher state byte (archived over
// acknowledged over available). The rule does not look at which batch is
// newer: a partition leader only ever raises a record's count or moves it
// to a terminal state, so the newest write of an offset also ranks highest,
// and a late or repeated delta cannot undo progress.
func (b stateBatch) outranks(o stateBatch) bool {
	if b.Deliveries != o.Deliveries {
		return b.Deliveries > o.Deliveries
	}
	return b.State > o.State
}

func (b stateBatch) sameDelivery(o stateBatch) bool {
	return b.State == o.State && b.Deliveries == o.Deliveries
}

// combineBatches merges update into current, as Kafka combines a write's
// batches with the stored ones (and a ShareUpdate record with the last
// snapshot). Each offset takes the delivery of the highest-ranked batch
// (outranks) that covers it; offsets below start, when start is known, are
// dropped. The inputs may overlap and come in any order; the result is
// canonical: sorted, non-overlapping, and adjacent batches (no offset
// between them) differ in state or count. Kafka's combiner may leave two
// equal neighbours unmerged; per offset, the result is the same.
func combineBatches(current, update []stateBatch, start optional[base.Offset]) []stateBatch {
	pieces := make([]stateBatch, 0, len(current)+len(update))
	for _, b := range slices.Concat(current, update) {
		if start.ok {
			if b.Offsets.End <= start.v {
				continue
			}
			b.Offsets.Start = max(b.Offsets.Start, start.v)
		}
		pieces = append(pieces, b)
	}
	if len(pieces) == 0 {
		return nil
	}
	slices.SortFunc(pieces, func(a, b stateBatch) int { return cmp.Compare(a.Offsets.Start, b.Offsets.Start) })
	return sweep(pieces, boundaries(pieces))
}

// boundaries returns every start and end of pieces, sorted and distinct:
// between two neighbours the set of covering batches does not change.
func boundaries(pieces []stateBatch) []base.Offset {
	out := make([]base.Offset, 0, 2*len(pieces))
	for _, b := range pieces {
		out = append(out, b.Offsets.Start, b.Offsets.End)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sweep walks the elementary ranges between bounds with the batches that
// cover each one in a heap, highest rank on top; a batch leaves the heap
// once it is on top and has ended (one that ended below the top does no
// harm: the top outranks it). pieces is sorted by start.
func sweep(pieces []stateBatch, bounds []base.Offset) []stateBatch {
	var out []stateBatch
	covering := &rankHeap{}
	next := 0
	for i := 0; i+1 < len(bounds); i++ {
		from, to := bounds[i], bounds[i+1]
		for next < len(pieces) && pieces[next].Offsets.Start <= from {
			heap.Push(covering, pieces[next])
			next++
		}
		for covering.Len() > 0 && (*covering)[0].Offsets.End <= from {
			heap.Pop(covering)
		}
		if covering.Len() == 0 {
			continue // a gap between batches
		}
		top := (*covering)[0]
		out = appendRun(out, stateBatch{Offsets: base.Range{Start: from, End: to}, State: top.State, Deliveries: top.Deliveries})
	}
	return out
}

// appendRun appends b to sorted, canonical batches, merging it into the
// last one when it continues it with the same delivery.
func appendRun(batches []stateBatch, b stateBatch) []stateBatch {
	if n := len(batches); n > 0 {
		last := &batches[n-1]
		if last.Offsets.End == b.Offsets.Start && last.sameDelivery(b) {
			last.Offsets.End = b.Offsets.End
			return batches
		}
	}
	return append(batches, b)
}

// rankHeap is a max-heap of batches by outranks.
type rankHeap []stateBatch

func (h rankHeap) Len() int           { return len(h) }
func (h rankHeap) Less(i, j int) bool { return h[i].outranks(h[j]) }
func (h rankHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)        { *h = append(*h, x.(stateBatch)) }
func (h *rankHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	*h = old[:len(old)-1]
	return b
}

// optional is a value that may be absent: what Kafka writes as -1 on the
// wire ("no start offset yet", "delivery complete count unknown").
type optional[T any] struct {
	v  T
	ok bool
}

func some[T any](v T) optional[T] { return optional[T]{v: v, ok: true} }

// startFromWire reads a start offset: -1 is absent, below that is invalid.
func startFromWire(v int64) (optional[base.Offset], bool) {
	switch {
	case v == -1:
		return optional[base.Offset]{}, true
	case v < -1:
		return optional[base.Offset]{}, false
	}
	return some(base.Offset(v)), true
}

func startToWire(o optional[base.Offset]) int64 {
	if !o.ok {
		return -1
	}
	return int64(o.v)
}

// countFromWire reads a delivery complete count: -1 is unknown, below that
// is invalid.
func countFromWire(v int32) (optional[int32], bool) {
	switch {
	case v == -1:
		return optional[int32]{}, true
	case v < -1:
		return optional[int32]{}, false
	}
	return some(v), true
}

func countToWire(o optional[int32]) int32 {
	if !o.ok {
		return -1
	}
	return o.v
}
