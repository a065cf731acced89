package replication

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
)

func TestTruncateLineageTable(t *testing.T) {
	lineage := lin(1, 0, 3, 10, 4, 10, 6, 20)
	for _, tc := range []struct {
		end  base.Offset
		want []base.EpochStart
	}{
		{25, lineage},
		{21, lineage},
		// An epoch starting exactly at the new end has no data left and goes
		// (Kafka's truncateFromEnd; the partition's recovery truncateFrom
		// keeps it, which a follower must not do).
		{20, lin(1, 0, 3, 10, 4, 10)},
		{11, lin(1, 0, 3, 10, 4, 10)},
		{10, lin(1, 0)},
		{1, lin(1, 0)},
		{0, []base.EpochStart{}},
	} {
		got := TruncateLineage(lineage, tc.end)
		if !slices.Equal(got, tc.want) {
			t.Errorf("TruncateLineage(%d) = %v, want %v", tc.end, got, tc.want)
		}
	}
	got := TruncateLineage(lineage, 15)
	got[0].Epoch = 99
	if lineage[0].Epoch != 1 {
		t.Error("TruncateLineage shares memory with its input")
	}
}

func TestLatestEpoch(t *testing.T) {
	if _, ok := LatestEpoch(nil); ok {
		t.Error("an empty lineage has a latest epoch")
	}
	if e, ok := LatestEpoch(lin(1, 0, 5, 3)); !ok || e != 5 {
		t.Errorf("LatestEpoch = %d, %v; want 5", e, ok)
	}
}

func TestMalformedLineagePanics(t *testing.T) {
	for _, lineage := range [][]base.EpochStart{
		lin(2, 0, 2, 5),  // epochs not strictly ascending
		lin(2, 0, 1, 5),  // epochs descending
		lin(1, 6, 2, 5),  // starts descending
		lin(1, 0, 2, 11), // a start past the log end
		lin(1, -1),       // a negative start
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("lineage %v: no panic", lineage)
				}
			}()
			EndOffsetForEpoch(lineage, 10, 1)
		}()
	}
}

// genLineage draws a valid lineage and a log end: 0-5 epochs, ascending
// with gaps, each holding 0-4 offsets, starting at a random log start.
func genLineage(t *rapid.T, label string) ([]base.EpochStart, base.Offset) {
	var lineage []base.EpochStart
	o := base.Offset(rapid.Int64Range(0, 5).Draw(t, label+"Start"))
	e := base.Epoch(rapid.Int32Range(0, 2).Draw(t, label+"Epoch0"))
	for i, n := 0, rapid.IntRange(0, 5).Draw(t, label+"Epochs"); i < n; i++ {
		lineage = append(lineage, base.EpochStart{Epoch: e, Start: o})
		o += base.Offset(rapid.Int64Range(0, 4).Draw(t, label+"Len"))
		e += base.Epoch(rapid.Int32Range(1, 3).Draw(t, label+"Gap"))
	}
	return lineage, o
}

// endOffsetModel answers from the definition, one epoch at a time: the data
// of epoch e is [its start, the next start), the latest runs to the log end.
func endOffsetModel(lineage []base.EpochStart, logEnd base.Offset, asked base.Epoch) (base.Epoch, base.Offset, bool) {
	if len(lineage) == 0 || asked > lineage[len(lineage)-1].Epoch {
		return 0, 0, false
	}
	found, end := asked, lineage[0].Start
	for i, e := range lineage {
		if e.Epoch > asked {
			break
		}
		found, end = e.Epoch, logEnd
		if i+1 < len(lineage) {
			end = lineage[i+1].Start
		}
	}
	return found, end, true
}

func TestPropEndOffsetForEpochModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lineage, logEnd := genLineage(t, "l")
		asked := base.Epoch(rapid.Int32Range(0, 20).Draw(t, "asked"))
		e, end, ok := EndOffsetForEpoch(lineage, logEnd, asked)
		we, wend, wok := endOffsetModel(lineage, logEnd, asked)
		if ok != wok || (ok && (e != we || end != wend)) {
			t.Fatalf("EndOffsetForEpoch(%v, %d, %d) = %d, %d, %v; model %d, %d, %v", lineage, logEnd, asked, e, end, ok, we, wend, wok)
		}
		if ok && (e > asked || end > logEnd) {
			t.Fatalf("answer (%d, %d) past the asked epoch %d or log end %d", e, end, asked, logEnd)
		}
		latest, hasLatest := LatestEpoch(lineage)
		if hasLatest != (len(lineage) > 0) {
			t.Fatalf("LatestEpoch(%v) ok = %v", lineage, hasLatest)
		}
		if hasLatest {
			if e, end, ok := EndOffsetForEpoch(lineage, logEnd, latest); !ok || e != latest || end != logEnd {
				t.Fatalf("the latest epoch %d answered %d, %d, %v; want it and the log end %d", latest, e, end, ok, logEnd)
			}
			if _, _, ok := EndOffsetForEpoch(lineage, logEnd, latest+1); ok {
				t.Fatalf("an epoch above the latest %d answered", latest)
			}
		}
	})
}

func TestPropTruncateLineage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lineage, logEnd := genLineage(t, "l")
		end := base.Offset(rapid.Int64Range(0, int64(logEnd)).Draw(t, "end"))
		got := TruncateLineage(lineage, end)
		if len(got) > len(lineage) || !slices.Equal(got, lineage[:len(got)]) {
			t.Fatalf("TruncateLineage(%v, %d) = %v, not a prefix", lineage, end, got)
		}
		for _, e := range got {
			if e.Start >= end {
				t.Fatalf("TruncateLineage(%v, %d) kept %v", lineage, end, e)
			}
		}
		if n := len(got); n < len(lineage) && lineage[n].Start < end {
			t.Fatalf("TruncateLineage(%v, %d) dropped %v", lineage, end, lineage[n])
		}
		// The truncated lineage answers like the original for the data kept.
		for _, e := range got[:max(len(got)-1, 0)] {
			_, a, _ := EndOffsetForEpoch(lineage, logEnd, e.Epoch)
			_, b, _ := EndOffsetForEpoch(got, end, e.Epoch)
			if a != b {
				t.Fatalf("epoch %d: end %d before truncation, %d after", e.Epoch, a, b)
			}
		}
	})
}
