package partition

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// TestDeleteTieredLocalBefore: a follower of a tiered topic deletes whole
// local segments below the offset it is given, never the active one and
// never past its high watermark; only its local log start moves (its log
// start stays the leader's, its lineage and log end stay), no .deleted
// file is left, and all of it holds across a restart. It keeps following
// afterwards, and made leader it answers reads below its local log start
// with ErrOffsetInRemote (the broker serves them from the remote tier).
func TestDeleteTieredLocalBefore(t *testing.T) {
	l := newLeader(t, tieredTopic, smallSegments)
	f := newFollower(t, 1, tieredTopic, smallSegments)
	for range 30 {
		mustAppend(t, l.p, batch(t, spec{records: 2, valueBytes: 100}), AcksLeader)
	}
	catchUp(t, l.p, f.p)
	bases := segmentBases(f.p)
	if len(bases) < 5 {
		t.Fatalf("segments %v, want several", bases)
	}
	before := f.p.Offsets()
	lineage := f.p.Lineage()
	check := func(what string, localStart base.Offset) {
		t.Helper()
		off := f.p.Offsets()
		off.RestartHW = false // true once reopened, until a leader answers
		want := before
		want.LocalStart = localStart
		if off != want {
			t.Fatalf("%s: offsets %+v, want %+v", what, off, want)
		}
		if got := f.p.Lineage(); !slices.Equal(got, lineage) {
			t.Fatalf("%s: lineage %v, want %v", what, got, lineage)
		}
		if got := segmentBases(f.p); got[0] != localStart {
			t.Fatalf("%s: segments %v, want the first at %d", what, got, localStart)
		}
		noDeletedFiles(t, f.e.dir)
	}

	if err := f.p.DeleteTieredLocalBefore(bases[2]); err != nil {
		t.Fatal(err)
	}
	check("below the third segment", bases[2])
	// Inside a segment: only the segments that end at or below it go.
	if err := f.p.DeleteTieredLocalBefore(bases[3] + 1); err != nil {
		t.Fatal(err)
	}
	check("inside the fourth segment", bases[3])
	// At or below the local log start: nothing.
	if err := f.p.DeleteTieredLocalBefore(bases[1]); err != nil {
		t.Fatal(err)
	}
	check("below the local log start", bases[3])
	if err := f.p.DeleteTieredLocalBefore(before.HighWatermark + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("past the high watermark: %v, want ErrOffsetOutOfRange", err)
	}
	check("refused past the high watermark", bases[3])
	// Up to the high watermark, which is the log end: the active segment stays.
	if err := f.p.DeleteTieredLocalBefore(before.HighWatermark); err != nil {
		t.Fatal(err)
	}
	last := bases[len(bases)-1]
	check("up to the high watermark", last)

	f.restart(t, 1)
	check("reopened", last)

	// It follows on; the leader's log start, below the local one, moves
	// only the log start.
	for range 10 {
		mustAppend(t, l.p, batch(t, spec{records: 2, valueBytes: 100}), AcksLeader)
	}
	catchUp(t, l.p, f.p)
	if err := f.p.SetLogStartFromLeader(bases[1]); err != nil {
		t.Fatal(err)
	}
	if off := f.p.Offsets(); off.LogStart != bases[1] || off.LocalStart != last || off.LogEnd != l.p.Offsets().LogEnd {
		t.Fatalf("after following on: %+v, want log start %d, local log start %d, the leader's log end", off, bases[1], last)
	}

	if err := f.p.BecomeLeader(2); err != nil {
		t.Fatal(err)
	}
	if _, err := f.p.Read(bases[2], 1<<20, nil); !errors.Is(err, ErrOffsetInRemote) {
		t.Fatalf("a read below the local log start of the new leader: %v, want ErrOffsetInRemote", err)
	}
	if err := f.p.DeleteTieredLocalBefore(f.p.Offsets().HighWatermark); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("on a leader: %v, want ErrNotFollower", err)
	}
}

// TestDeleteTieredLocalBeforeRefusals: a leader (its tier loop applies its
// own retention) and an untiered follower (no remote copy stands in for
// its segments) delete nothing.
func TestDeleteTieredLocalBeforeRefusals(t *testing.T) {
	l := newLeader(t, tieredTopic, smallSegments)
	plain := newFollower(t, 1, smallSegments)
	for range 20 {
		mustAppend(t, l.p, batch(t, spec{records: 2, valueBytes: 100}), AcksLeader)
	}
	catchUp(t, l.p, plain.p)
	for _, tc := range []struct {
		name string
		p    *Partition
		want error
	}{
		{"leader", l.p, ErrNotFollower},
		{"untiered follower", plain.p, ErrFollowerNotTiered},
	} {
		bases := segmentBases(tc.p)
		if err := tc.p.DeleteTieredLocalBefore(tc.p.Offsets().HighWatermark); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if got := segmentBases(tc.p); !slices.Equal(got, bases) || len(bases) < 2 {
			t.Errorf("%s: segments %v, were %v", tc.name, got, bases)
		}
	}
	if err := plain.p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := plain.p.DeleteTieredLocalBefore(1); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v, want ErrClosed", err)
	}
}

func noDeletedFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".deleted") {
			t.Fatalf("%s left in %s", e.Name(), dir)
		}
	}
}
