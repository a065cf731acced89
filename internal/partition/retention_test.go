package partition

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/retention"
)

// fill appends count one-record batches of about 250 bytes, so that a
// 1024-byte segment holds three of them.
func fill(t *testing.T, e *env, p *Partition, count int, step time.Duration) {
	t.Helper()
	for range count {
		mustAppend(t, p, batch(t, spec{valueBytes: 180, tsMs: e.clock.Now().UnixMilli()}), AcksLeader)
		e.clock.Advance(step)
	}
}

func TestDeleteRecords(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	fill(t, e, p, 30, 0)
	segs := p.log.Segments()
	if len(segs) < 5 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	// Inside the third segment: the first two go, the third stays.
	target := segs[2].BaseOffset + 1
	start, err := p.DeleteRecords(target)
	if err != nil || start != target {
		t.Fatalf("DeleteRecords(%d) = %d, %v", target, start, err)
	}
	if got := segmentBases(p)[0]; got != segs[2].BaseOffset {
		t.Fatalf("first local segment %d, want %d", got, segs[2].BaseOffset)
	}
	if _, err := p.Read(target-1, 1024, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read below the log start: %v", err)
	}
	// The region a fetch sends with sendfile too: the deleted record is
	// still in the segment's bytes.
	if _, _, err := p.ReadRegion(target-1, 1024); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("ReadRegion below the log start: %v", err)
	}
	if off := p.Offsets(); off.LogStart != target || off.LocalStart != segs[2].BaseOffset {
		t.Fatalf("Offsets = %+v", off)
	}
	// Never backwards.
	if start, err := p.DeleteRecords(1); err != nil || start != target {
		t.Fatalf("DeleteRecords(1) = %d, %v; want %d", start, err, target)
	}
	hw := p.Offsets().HighWatermark
	if _, err := p.DeleteRecords(hw + 1); !errors.Is(err, ErrDeleteBeyondHighWatermark) {
		t.Fatalf("DeleteRecords beyond the high watermark: %v", err)
	}
	// A negative offset (a client's; -1 is resolved before) is out of
	// range, as in Kafka: it used to reach the retention planner, whose
	// contract it broke, and panic the broker (librdkafka's 0081_admin
	// sends -1001).
	for _, before := range []base.Offset{-1, -2, -1001} {
		if start, err := p.DeleteRecords(before); !errors.Is(err, ErrOffsetOutOfRange) || p.Offsets().LogStart != target {
			t.Fatalf("DeleteRecords(%d) = %d, %v; want ErrOffsetOutOfRange and the log start kept", before, start, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if got := p.Offsets().LogStart; got != target {
		t.Fatalf("log start after reopen %d, want %d", got, target)
	}
	// Up to the high watermark is allowed, and keeps the active segment.
	if start, err := p.DeleteRecords(hw); err != nil || start != hw {
		t.Fatalf("DeleteRecords(hw) = %d, %v", start, err)
	}
	if segs := p.log.Segments(); !segs[0].Active {
		t.Fatalf("%d segments left, want only the active one", len(segs))
	}
}

// TestDeleteRecordsUnderKeepRecords: a topic whose cleanup.policy does
// not delete (compact alone) refuses DeleteRecords and keeps its log
// start; once its policy deletes again, DeleteRecords moves it.
func TestDeleteRecordsUnderKeepRecords(t *testing.T) {
	e := newEnv(t, smallSegments, func(o *Options) { o.Config.KeepRecords = true })
	p := e.open(t)
	fill(t, e, p, 10, 0)
	for _, before := range []base.Offset{1, p.Offsets().HighWatermark} {
		if start, err := p.DeleteRecords(before); !errors.Is(err, ErrRecordsKept) || start != 0 || p.Offsets().LogStart != 0 {
			t.Fatalf("DeleteRecords(%d) under KeepRecords = %d, %v; want ErrRecordsKept and the log start at 0", before, start, err)
		}
	}
	cfg := e.opts.Config
	cfg.KeepRecords = false
	if err := p.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if start, err := p.DeleteRecords(1); err != nil || start != 1 {
		t.Fatalf("DeleteRecords(1) once records may go = %d, %v", start, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestApplyRetentionBytes(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	fill(t, e, p, 40, 0)
	before := p.log.Segments()
	const limit = 3000
	p.mu.Lock()
	p.mu.cfg.Retention = retention.Policy{RetentionBytes: retention.LimitOf(limit)}
	p.mu.Unlock()
	if _, err := p.ApplyRetention(e.clock.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	after := p.log.Segments()
	var remaining int64
	for _, s := range after {
		remaining += s.SizeBytes
	}
	// Oldest first, stopping while what remains is still at least the limit.
	deleted := len(before) - len(after)
	if deleted == 0 || remaining < limit || remaining-after[0].SizeBytes >= limit {
		t.Fatalf("%d of %d segments deleted, %d bytes remain; limit %d", deleted, len(before), remaining, limit)
	}
	if after[0].BaseOffset != before[deleted].BaseOffset || !after[len(after)-1].Active {
		t.Fatal("retention did not delete a prefix, or took the active segment")
	}
	if got := p.Offsets().LogStart; got != after[0].BaseOffset {
		t.Fatalf("log start %d, want %d", got, after[0].BaseOffset)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.open(t).Offsets().LogStart; got != after[0].BaseOffset {
		t.Fatalf("log start after reopen %d, want %d", got, after[0].BaseOffset)
	}
}

func TestApplyRetentionMs(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	fill(t, e, p, 30, time.Minute) // record timestamps a minute apart
	segs := p.log.Segments()
	// Segment 4 is exactly as old as the limit: kept (Kafka deletes only
	// segments older than retention.ms).
	nowMs := e.clock.Now().UnixMilli()
	limitMs := nowMs - segs[4].MaxTimestamp
	p.mu.Lock()
	p.mu.cfg.Retention = retention.Policy{RetentionMs: retention.LimitOf(limitMs)}
	p.mu.Unlock()
	if _, err := p.ApplyRetention(nowMs); err != nil {
		t.Fatal(err)
	}
	if got := segmentBases(p)[0]; got != segs[4].BaseOffset {
		t.Fatalf("first segment %d after retention.ms, want %d", got, segs[4].BaseOffset)
	}
	// Everything expired: every sealed segment goes, the active one stays.
	p.mu.Lock()
	p.mu.cfg.Retention = retention.Policy{RetentionMs: retention.LimitOf(0)}
	p.mu.Unlock()
	if _, err := p.ApplyRetention(nowMs + 1); err != nil {
		t.Fatal(err)
	}
	left := p.log.Segments()
	if len(left) != 1 || !left[0].Active || left[0].BaseOffset != segs[len(segs)-1].BaseOffset {
		t.Fatalf("segments left %+v, want only the active one", left)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.open(t).Offsets().LogStart; got != left[0].BaseOffset {
		t.Fatalf("log start after reopen %d, want %d", got, left[0].BaseOffset)
	}
}

// Regression: a segment whose batches carry no timestamp (-1) was aged from
// the epoch and deleted by any retention.ms; Kafka ages it by its
// last-modified time.
func TestRetentionMsSegmentWithoutTimestamps(t *testing.T) {
	e := newEnv(t, smallSegments)
	p := e.open(t)
	for range 10 {
		mustAppend(t, p, batch(t, spec{valueBytes: 180, tsMs: -1}), AcksLeader)
	}
	p.mu.Lock()
	p.mu.cfg.Retention = retention.Policy{RetentionMs: retention.LimitOf(time.Hour.Milliseconds())}
	p.mu.Unlock()
	if _, err := p.ApplyRetention(e.clock.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if got := p.Offsets().LogStart; got != 0 {
		t.Fatalf("fresh segments without timestamps were deleted: log start %d", got)
	}
	e.clock.Advance(2 * time.Hour)
	if _, err := p.ApplyRetention(e.clock.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if got, want := p.Offsets().LogStart, segmentBases(p)[0]; got == 0 || got != want {
		t.Fatalf("old segments without timestamps kept: log start %d, first segment %d", got, want)
	}
}

func TestDeleteRecordsAfterClose(t *testing.T) {
	p := newEnv(t).open(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DeleteRecords(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("DeleteRecords after Close: %v", err)
	}
	if _, err := p.ApplyRetention(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("ApplyRetention after Close: %v", err)
	}
}

// openTieredWithSegments opens a tiered partition of small segments and
// appends ten batches to it: bases are its segments' base offsets, at
// least three.
func openTieredWithSegments(t *testing.T) (*env, *Partition, []base.Offset) {
	t.Helper()
	e := newEnv(t, smallSegments, func(o *Options) { o.Config.Tiered = true })
	p := e.open(t)
	for range 10 {
		mustAppend(t, p, batch(t, spec{valueBytes: 300}), AcksAll)
	}
	bases := segmentBases(p)
	if len(bases) < 3 {
		t.Fatalf("segments %v: want several", bases)
	}
	return e, p, bases
}

// TestTieredDeleteRecords: on a tiered partition DeleteRecords only moves
// the log start (the tier loop deletes the segments below it, remote and
// local, on its next pass); the start is persisted at once, so a restart
// before that pass does not serve the deleted records again.
func TestTieredDeleteRecords(t *testing.T) {
	e, p, bases := openTieredWithSegments(t)
	target := bases[1] + 1
	if start, err := p.DeleteRecords(target); err != nil || start != target {
		t.Fatalf("DeleteRecords(%d) = %d, %v", target, start, err)
	}
	if got := segmentBases(p); !slices.Equal(got, bases) {
		t.Fatalf("segments %v after DeleteRecords, want %v kept for the tier loop", got, bases)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = e.open(t)
	if got := p.Offsets().LogStart; got != target {
		t.Fatalf("log start %d after reopening, want %d", got, target)
	}
	if _, err := p.Read(target-1, 1024, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a read below the log start after reopening: %v", err)
	}
}

// Turning tiering off (KIP-950) moves the log start up to the local log
// start, persisted: the remote prefix is being deleted and must not be
// read.
func TestTieringOffMovesLogStartToLocal(t *testing.T) {
	e, p, bases := openTieredWithSegments(t)
	// The tier holds the prefix; local retention deleted its segments.
	if err := p.log.DeleteSegmentsBefore(bases[2]); err != nil {
		t.Fatal(err)
	}
	if got := p.Offsets().LogStart; got != 0 {
		t.Fatalf("tiered log start %d, want 0 (the prefix is remote)", got)
	}
	cfg := p.Config()
	cfg.Tiered = false
	if err := p.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if got := p.Offsets().LogStart; got != bases[2] {
		t.Fatalf("log start %d after tiering went off, want the local start %d", got, bases[2])
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	o := e.opts
	o.Config.Tiered = false
	if got := openAt(t, o).Offsets().LogStart; got != bases[2] {
		t.Fatalf("log start %d after reopening, want %d", got, bases[2])
	}
}

// Regression: a tier pass that planned local deletions while the topic was
// tiered applied them after tiering was turned off, deleting local
// segments whose remote copies were being deleted too (found by
// TestTieredStorageTurnedOff: the log start pointed at offsets in neither
// tier). The stale decision is refused and nothing is deleted.
func TestTierDecisionRefusedOnceTieringIsOff(t *testing.T) {
	_, p, bases := openTieredWithSegments(t)
	stale := retention.Decision{NewLogStart: 0, DeleteLocalBefore: bases[2]}
	cfg := p.Config()
	cfg.Tiered = false
	if err := p.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if err := p.TierLocal().ApplyLocal(stale); !errors.Is(err, ErrNotTiered) {
		t.Fatalf("a tier decision applied after tiering went off: %v, want ErrNotTiered", err)
	}
	if got := segmentBases(p); !slices.Equal(got, bases) {
		t.Fatalf("segments %v after a refused decision, want %v", got, bases)
	}
}

// The log start never moves backward: a tier pass's decision planned
// before DeleteRecords moved the start further (the two do not share a
// lock) leaves the newer start, on disk too, and a DeleteRecords below
// the log start changes nothing.
func TestLogStartNeverMovesBackward(t *testing.T) {
	e, p, bases := openTieredWithSegments(t)
	moved := bases[1] + 1
	if start, err := p.DeleteRecords(moved); err != nil || start != moved {
		t.Fatalf("DeleteRecords(%d) = %d, %v", moved, start, err)
	}
	stale := retention.Decision{NewLogStart: bases[1], DeleteLocalBefore: bases[1]}
	if err := p.TierLocal().ApplyLocal(stale); err != nil {
		t.Fatal(err)
	}
	if got := p.Offsets().LogStart; got != moved {
		t.Fatalf("log start %d after a stale tier decision, want %d", got, moved)
	}
	if start, err := p.DeleteRecords(bases[1]); err != nil || start != moved {
		t.Fatalf("DeleteRecords(%d) below the log start = %d, %v; want %d", bases[1], start, err, moved)
	}
	if start, err := readLogStart(e.dir); err != nil || start != moved {
		t.Fatalf("persisted log start %d, %v; want %d", start, err, moved)
	}
}
