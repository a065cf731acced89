package log

import (
	"os"
	"testing"

	"github.com/strata-broker/strata/internal/vfs"
)

// Only segments wholly below the recovery point are trusted without a
// scan. A single-record segment at the recovery point, rolled past but
// not synced since, is scanned: a bad batch in it is cut, with the
// segment after it (reference 001's off-by-one is this boundary).
func TestRecoveryScansASingleRecordSegmentAtTheRecoveryPoint(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	batches := appendN(t, l, 5, 2, 60, 0)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	single := makeBatch(10, 1, 60, 100)
	if err := l.Append(single); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil { // the recovery point moves to 10
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil { // a segment at 11, no sync after
		t.Fatal(err)
	}
	l.crash()
	if rp, ok, err := readRecoveryPoint(vfs.Default, o.Dir); err != nil || !ok || rp != 10 {
		t.Fatalf("recovery point %d (%v, %v), want 10", rp, ok, err)
	}
	p := segFile(o, 10, ".log")
	b := mustRead(t, p)
	b[len(b)-5] ^= 0x04 // in its record: the CRC fails
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	reopenExpect(t, o, batches)
	if exists(segFile(o, 11, ".log")) {
		t.Fatal("the segment after the cut is still there")
	}
}

// A cleanly shut down segment whose data runs past its successor's base
// is not trusted: the scan cuts the batch that runs into the successor,
// and the segments after the cut go.
func TestRecoveryDoesNotTrustASegmentRunningIntoItsSuccessor(t *testing.T) {
	o, batches := crashedLog(t, true)
	l := mustOpen(t, o)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(segFile(o, 0, ".log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(batches[5]); err != nil { // offsets [10, 12), segment 10's first batch
		t.Fatal(err)
	}
	f.Close()
	reopenExpect(t, o, batches[:5])
	if exists(segFile(o, 10, ".log")) {
		t.Fatal("the segment after the cut is still there")
	}
}

// A truncation into a sealed segment with gaps (the new active segment
// starts at the truncation point) lowers the recovery point to that
// point: what is appended after it, rolled but not synced, is scanned at
// the next start, and a bad batch there is cut with what follows it.
func TestTruncationIntoASealedSegmentLowersTheRecoveryPoint(t *testing.T) {
	o := followerOptions(t)
	l := mustOpen(t, o)
	model := buildFollowerLog(t, l)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	rp, _, _ := readRecoveryPoint(vfs.Default, o.Dir)
	// The first batch of the second segment that follows a gap: truncating
	// there keeps the batches before it, which end short of it.
	segs := l.Segments()
	k := servingBatch(model, segs[1].BaseOffset) + 1
	for ; headerOf(model[k]).BaseOffset == headerOf(model[k-1]).NextOffset(); k++ {
	}
	to := headerOf(model[k]).BaseOffset
	if to >= segs[1].NextOffset || to+4 > rp {
		t.Fatalf("no gap to truncate at in segment %d below the recovery point %d (found %d)", segs[1].BaseOffset, rp, to)
	}
	if err := l.TruncateTo(to); err != nil {
		t.Fatal(err)
	}
	if got := l.Segments(); got[len(got)-1].BaseOffset != to {
		t.Fatalf("after TruncateTo(%d) the active segment starts at %d: not the sealed-segment case", to, got[len(got)-1].BaseOffset)
	}
	if err := l.AppendReplicated(concat([][]byte{makeBatch(to, 2, 30, 5000), makeBatch(to+2, 2, 30, 5001)})); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	l.crash()
	p := segFile(o, to, ".log")
	b := mustRead(t, p)
	b[len(b)-5] ^= 0x04 // in the second batch's records: its CRC fails
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if l.End() != to+2 {
		t.Fatalf("recovered to %d, want %d (the bad batch at %d cut)", l.End(), to+2, to+2)
	}
	if exists(segFile(o, to+4, ".log")) {
		t.Fatal("the segment after the cut is still there")
	}
}
