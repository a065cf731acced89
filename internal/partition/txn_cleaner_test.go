package partition

import (
	"fmt"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// End to end: the cleaner of a compacted partition drops what an aborted
// transaction wrote, and does not let it supersede the committed values
// before it (an aborted record is never the latest of its key).
func TestCleanerRemovesAbortedData(t *testing.T) {
	e := newEnv(t, compacted)
	p := e.open(t)
	keys := []string{"a", "b", "c"}
	mustAppend(t, p, batch(t, spec{keys: keys, valueBytes: 100}), AcksLeader) // [0, 2]
	ab := mustAppend(t, p, batch(t, spec{pid: 1, seq: 0, keys: keys, valueBytes: 100, transactional: true}), AcksLeader)
	mustMarker(t, p, 1, 0, false, 0)
	com := mustAppend(t, p, batch(t, spec{pid: 2, seq: 0, keys: []string{"b"}, valueBytes: 100, transactional: true}), AcksLeader)
	mustMarker(t, p, 2, 0, true, 0)
	// Producer 1 goes on, so that its aborted batch is not its last (which
	// the cleaner would keep a record of, for its sequence).
	mustAppend(t, p, batch(t, spec{pid: 1, seq: 3, keys: []string{"z"}, valueBytes: 100, transactional: true}), AcksLeader)
	mustMarker(t, p, 1, 0, true, 0)
	for i := 0; len(segmentBases(p)) < 4; i++ {
		mustAppend(t, p, batch(t, spec{keys: []string{fmt.Sprintf("fill-%03d", i)}, valueBytes: 200}), AcksLeader)
	}
	if got := p.AbortedTxns(0, 100); len(got) != 1 || got[0].FirstOffset != ab.BaseOffset {
		t.Fatalf("AbortedTxns = %v", got)
	}
	cleanUntilDone(t, p, NewCleanerMap(1<<20), e.clock.Now().UnixMilli())

	latest := map[string]base.Offset{}
	for _, r := range readRecords(t, p) {
		if r.offset >= ab.BaseOffset && r.offset < ab.BaseOffset+3 {
			t.Fatalf("aborted record %q at %d survived cleaning", r.key, r.offset)
		}
		latest[r.key] = r.offset
	}
	for k, want := range map[string]base.Offset{"a": 0, "b": com.BaseOffset, "c": 2} {
		if latest[k] != want {
			t.Errorf("key %q ends at offset %d, want %d", k, latest[k], want)
		}
	}
	if latest["b"] == 1 {
		t.Error("the superseded plain b survived")
	}
}

// The cleaner never cleans past the last stable offset: an open
// transaction may still abort.
func TestCleaningStopsAtLastStable(t *testing.T) {
	e := newEnv(t, compacted)
	p := e.open(t)
	fill := func(segments int) {
		for i := 0; len(segmentBases(p)) < segments; i++ {
			mustAppend(t, p, batch(t, spec{keys: []string{fmt.Sprintf("fill-%03d", i%7)}, valueBytes: 200}), AcksLeader)
		}
	}
	fill(3)
	open := mustAppend(t, p, batch(t, spec{pid: 1, keys: []string{"x"}, transactional: true}), AcksLeader).BaseOffset
	fill(7)
	now := e.clock.Now().UnixMilli()
	d, err := p.PlanCleaning(now)
	if err != nil {
		t.Fatal(err)
	}
	if d.FirstUncleanable > open {
		t.Fatalf("plan cleans up to %d, past the open transaction at %d", d.FirstUncleanable, open)
	}
	mustMarker(t, p, 1, 0, true, 0)
	if d, err = p.PlanCleaning(now); err != nil {
		t.Fatal(err)
	}
	if d.FirstUncleanable <= open {
		t.Fatalf("after the commit the plan still stops at %d", d.FirstUncleanable)
	}
}
