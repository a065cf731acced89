package partition

import (
	"testing"
)

// What Open restores of the log start: a tiered partition's stays below
// its local log start (the prefix is remote), an untiered one's is raised
// to it (nothing below it is readable any more, as when tiering was turned
// off while the broker was stopped), and one past the log end (a crash
// lost a tail that DeleteRecords had already moved the start into) is
// lowered to the log end, so logStart <= localLogStart <= highWatermark <=
// logEnd holds after every Open.
func TestOpenRestoresLogStartWithinTheLog(t *testing.T) {
	t.Run("tiered, reopened tiered", func(t *testing.T) {
		e, p, bases := openTieredWithSegments(t)
		if err := p.log.DeleteSegmentsBefore(bases[2]); err != nil { // the tier's local retention
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		off := e.open(t).Offsets()
		if off.LogStart != 0 || off.LocalStart != bases[2] {
			t.Fatalf("reopened: %+v, want the log start 0 below the local log start %d", off, bases[2])
		}
	})
	t.Run("tiered, reopened untiered", func(t *testing.T) {
		e, p, bases := openTieredWithSegments(t)
		if err := p.log.DeleteSegmentsBefore(bases[2]); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		o := e.opts
		o.Config.Tiered = false
		off := openAt(t, o).Offsets()
		if off.LogStart != bases[2] || off.LocalStart != bases[2] || off.HighWatermark < off.LogStart {
			t.Fatalf("reopened untiered: %+v, want the log start raised to the local log start %d", off, bases[2])
		}
	})
	t.Run("log start past a log that lost its tail", func(t *testing.T) {
		e := newEnv(t)
		p := e.open(t)
		mustAppend(t, p, batch(t, spec{records: 5}), AcksAll)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		// DeleteRecords(9) persisted 9 before a crash lost [5, 9).
		if err := writeLogStart(e.dir, 9); err != nil {
			t.Fatal(err)
		}
		p = e.open(t)
		if off := p.Offsets(); off.LogStart != 5 || off.HighWatermark != 5 || off.LogEnd != 5 {
			t.Fatalf("reopened: %+v, want the log start lowered to the log end 5", off)
		}
		if res := mustAppend(t, p, batch(t, spec{}), AcksAll); res.BaseOffset != 5 || res.LogStart != 5 {
			t.Fatalf("append after reopening: %+v, want offset 5 with log start 5", res)
		}
		if hs := readAll(t, p, 5); len(hs) != 1 || hs[0].BaseOffset != 5 {
			t.Fatalf("read from the log start: %+v", hs)
		}
	})
}
