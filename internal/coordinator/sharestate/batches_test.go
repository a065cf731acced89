package sharestate

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

// sb is a batch as the wire writes it: first and last inclusive.
func sb(first, last int64, state deliveryState, deliveries int16) stateBatch {
	return stateBatch{Offsets: base.Range{Start: base.Offset(first), End: base.Offset(last + 1)}, State: state, Deliveries: deliveries}
}

const (
	avail = stateAvailable
	acked = stateAcknowledged
	arch  = stateArchived
)

var noStart = optional[base.Offset]{}

func startAt(o int64) optional[base.Offset] { return some(base.Offset(o)) }

// TestCombineBatchesKafkaCases are the cases of Kafka's
// PersisterStateBatchCombinerTest, with the states it uses that are never
// persisted (1 and 3) replaced by persisted ones of the same order, and the
// expected batches in canonical form.
func TestCombineBatchesKafkaCases(t *testing.T) {
	for _, tc := range []struct {
		name            string
		current, update []stateBatch
		start           optional[base.Offset]
		want            []stateBatch
	}{
		{"current pruned at start", []stateBatch{sb(100, 130, avail, 1)}, nil, startAt(120), []stateBatch{sb(120, 130, avail, 1)}},
		{"update pruned at start", nil, []stateBatch{sb(100, 130, avail, 1)}, startAt(120), []stateBatch{sb(120, 130, avail, 1)}},
		{"both empty", nil, nil, startAt(120), nil},
		{"same state, same range", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(100, 110, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 1)}},
		{"same state, update shorter", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(100, 105, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 1)}},
		{"same state, update longer", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(100, 115, avail, 1)}, noStart, []stateBatch{sb(100, 115, avail, 1)}},
		{"same state, update inside", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(105, 108, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 1)}},
		{"same state, update overlaps the end", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(105, 115, avail, 1)}, noStart, []stateBatch{sb(100, 115, avail, 1)}},
		{"same state, contiguous", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(111, 115, avail, 1)}, noStart, []stateBatch{sb(100, 115, avail, 1)}},
		{"higher count, same range", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(100, 110, avail, 2)}, noStart, []stateBatch{sb(100, 110, avail, 2)}},
		{"lower count, same range: the stored one stays", []stateBatch{sb(100, 110, avail, 3)}, []stateBatch{sb(100, 110, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 3)}},
		{"higher count, update shorter", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(100, 105, avail, 2)}, noStart, []stateBatch{sb(100, 105, avail, 2), sb(106, 110, avail, 1)}},
		{"lower count, update shorter", []stateBatch{sb(100, 110, avail, 3)}, []stateBatch{sb(100, 105, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 3)}},
		{"higher count, update longer", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(100, 115, avail, 2)}, noStart, []stateBatch{sb(100, 115, avail, 2)}},
		{"lower count, update longer", []stateBatch{sb(100, 110, avail, 3)}, []stateBatch{sb(100, 115, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 3), sb(111, 115, avail, 1)}},
		{"higher state inside", []stateBatch{sb(100, 115, avail, 1)}, []stateBatch{sb(105, 110, acked, 1)}, noStart, []stateBatch{sb(100, 104, avail, 1), sb(105, 110, acked, 1), sb(111, 115, avail, 1)}},
		{"lower state inside", []stateBatch{sb(100, 115, acked, 1)}, []stateBatch{sb(105, 110, avail, 1)}, noStart, []stateBatch{sb(100, 115, acked, 1)}},
		{"higher count at the end", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(105, 110, avail, 2)}, noStart, []stateBatch{sb(100, 104, avail, 1), sb(105, 110, avail, 2)}},
		{"lower count at the end", []stateBatch{sb(100, 110, avail, 2)}, []stateBatch{sb(105, 110, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 2)}},
		{"higher count past the end", []stateBatch{sb(100, 110, avail, 1)}, []stateBatch{sb(105, 115, avail, 2)}, noStart, []stateBatch{sb(100, 104, avail, 1), sb(105, 115, avail, 2)}},
		{"lower count past the end", []stateBatch{sb(100, 110, avail, 2)}, []stateBatch{sb(105, 115, avail, 1)}, noStart, []stateBatch{sb(100, 110, avail, 2), sb(111, 115, avail, 1)}},
		{
			"overlapping updates, same state",
			[]stateBatch{sb(100, 110, avail, 1), sb(121, 130, avail, 1)},
			[]stateBatch{sb(111, 119, acked, 2), sb(116, 123, acked, 2)},
			noStart,
			[]stateBatch{sb(100, 110, avail, 1), sb(111, 123, acked, 2), sb(124, 130, avail, 1)},
		},
		{
			"overlapping updates, different states",
			[]stateBatch{sb(100, 110, avail, 1)},
			[]stateBatch{sb(101, 105, avail, 2), sb(101, 115, acked, 2), sb(101, 120, arch, 2)},
			noStart,
			[]stateBatch{sb(100, 100, avail, 1), sb(101, 120, arch, 2)},
		},
		{
			"overlapping updates, pruned",
			[]stateBatch{sb(100, 110, avail, 1), sb(121, 130, avail, 1)},
			[]stateBatch{sb(111, 119, acked, 2), sb(116, 123, acked, 2)},
			startAt(120),
			[]stateBatch{sb(120, 123, acked, 2), sb(124, 130, avail, 1)},
		},
		{
			"several single-state updates",
			[]stateBatch{sb(111, 120, avail, 1)},
			[]stateBatch{sb(111, 113, avail, 2), sb(114, 114, acked, 1), sb(115, 119, avail, 2)},
			noStart,
			[]stateBatch{sb(111, 113, avail, 2), sb(114, 114, acked, 1), sb(115, 119, avail, 2), sb(120, 120, avail, 1)},
		},
		{
			// Kafka's combiner leaves [0,4] and [5,12] apart here; they are
			// one run.
			"equal neighbours merge",
			[]stateBatch{sb(0, 4, avail, 2), sb(5, 10, avail, 1)},
			[]stateBatch{sb(5, 12, avail, 2)},
			noStart,
			[]stateBatch{sb(0, 12, avail, 2)},
		},
		{"gap kept", []stateBatch{sb(0, 4, avail, 1)}, []stateBatch{sb(10, 14, avail, 1)}, noStart, []stateBatch{sb(0, 4, avail, 1), sb(10, 14, avail, 1)}},
		{"start past everything", []stateBatch{sb(0, 4, acked, 1)}, []stateBatch{sb(5, 9, arch, 1)}, startAt(10), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := combineBatches(tc.current, tc.update, tc.start)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("combineBatches =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

func TestBatchFromWire(t *testing.T) {
	for _, tc := range []struct {
		first, last int64
		state       int8
		deliveries  int16
		ok          bool
	}{
		{0, 0, 0, 0, true},
		{5, 9, 2, 1, true},
		{5, 9, 4, 7, true},
		{0, math.MaxInt64 - 1, 0, 1, true},
		{-1, 3, 0, 1, false},
		{4, 3, 0, 1, false},
		{0, math.MaxInt64, 0, 1, false},
		{0, 3, 1, 1, false}, // acquired is never persisted
		{0, 3, 3, 1, false},
		{0, 3, -1, 1, false},
		{0, 3, 0, -1, false},
	} {
		b, err := batchFromWire(tc.first, tc.last, tc.state, tc.deliveries)
		if (err == nil) != tc.ok {
			t.Fatalf("batchFromWire(%d, %d, %d, %d): %v", tc.first, tc.last, tc.state, tc.deliveries, err)
		}
		if tc.ok && (b.firstOffset() != tc.first || b.lastOffset() != tc.last) {
			t.Fatalf("batchFromWire(%d, %d) = %v", tc.first, tc.last, b.Offsets)
		}
	}
}

// rank is an offset's delivery in the per-offset model.
type rank struct {
	state      deliveryState
	deliveries int16
}

func (r rank) outranks(o rank) bool {
	return stateBatch{State: r.state, Deliveries: r.deliveries}.outranks(stateBatch{State: o.state, Deliveries: o.deliveries})
}

// modelCombine is combineBatches offset by offset: each offset at or past
// start takes the highest rank of the batches covering it.
func modelCombine(start optional[base.Offset], lists ...[]stateBatch) map[base.Offset]rank {
	m := map[base.Offset]rank{}
	for _, l := range lists {
		for _, b := range l {
			for o := b.Offsets.Start; o < b.Offsets.End; o++ {
				if start.ok && o < start.v {
					continue
				}
				r := rank{b.State, b.Deliveries}
				if old, ok := m[o]; !ok || r.outranks(old) {
					m[o] = r
				}
			}
		}
	}
	return m
}

// expand is batches offset by offset.
func expand(batches []stateBatch) map[base.Offset]rank {
	m := map[base.Offset]rank{}
	for _, b := range batches {
		for o := b.Offsets.Start; o < b.Offsets.End; o++ {
			m[o] = rank{b.State, b.Deliveries}
		}
	}
	return m
}

// checkCanonical asserts the batch invariant of doc.go.
func checkCanonical(tb tb, batches []stateBatch, start optional[base.Offset]) {
	tb.Helper()
	for i, b := range batches {
		if b.Offsets.Empty() || b.Offsets.Start < 0 || !b.State.valid() || b.Deliveries < 0 {
			tb.Fatalf("batch %d is %+v", i, b)
		}
		if start.ok && b.Offsets.Start < start.v {
			tb.Fatalf("batch %d %v starts below the start offset %d", i, b.Offsets, start.v)
		}
		if i == 0 {
			continue
		}
		prev := batches[i-1]
		if b.Offsets.Start < prev.Offsets.End {
			tb.Fatalf("batch %d %v overlaps or precedes %v", i, b.Offsets, prev.Offsets)
		}
		if b.Offsets.Start == prev.Offsets.End && b.sameDelivery(prev) {
			tb.Fatalf("batches %d and %d are equal neighbours: %+v %+v", i-1, i, prev, b)
		}
	}
}

func drawBatches(rt *rapid.T, label string) []stateBatch {
	return rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) stateBatch {
		first := rapid.Int64Range(0, 60).Draw(rt, "first")
		last := first + rapid.Int64Range(0, 12).Draw(rt, "length")
		state := rapid.SampledFrom([]deliveryState{avail, acked, arch}).Draw(rt, "state")
		return sb(first, last, state, int16(rapid.IntRange(0, 3).Draw(rt, "deliveries")))
	}), 0, 8).Draw(rt, label)
}

func drawStart(rt *rapid.T) optional[base.Offset] {
	if rapid.Bool().Draw(rt, "hasStart") {
		return startAt(rapid.Int64Range(0, 70).Draw(rt, "start"))
	}
	return noStart
}

// TestPropertyCombineMatchesModel: for any two lists of batches (each may
// overlap itself) and any start offset, combineBatches holds exactly the
// per-offset model and is canonical; the order of the inputs does not
// matter; and combining again with nothing new changes nothing.
func TestPropertyCombineMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		current, update := drawBatches(rt, "current"), drawBatches(rt, "update")
		start := drawStart(rt)
		got := combineBatches(current, update, start)
		checkCanonical(rt, got, start)
		if want, have := modelCombine(start, current, update), expand(got); !equalRanks(want, have) {
			rt.Fatalf("combineBatches(%v, %v, %v) = %v\nper offset %v\nwant %v", current, update, start, got, have, want)
		}
		if swapped := combineBatches(update, current, start); !slices.Equal(swapped, got) {
			rt.Fatalf("order matters: %v vs %v", swapped, got)
		}
		if again := combineBatches(got, nil, start); !slices.Equal(again, got) {
			rt.Fatalf("not idempotent: %v then %v", got, again)
		}
	})
}

func equalRanks(a, b map[base.Offset]rank) bool {
	if len(a) != len(b) {
		return false
	}
	for o, r := range a {
		if b[o] != r {
			return false
		}
	}
	return true
}

func (b stateBatch) String() string {
	return fmt.Sprintf("[%d,%d]s%d/d%d", b.firstOffset(), b.lastOffset(), b.State, b.Deliveries)
}
