package log

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// The tests of AppendReplicated: a follower's log takes its leader's
// batches with gaps between them (where the leader's cleaner removed
// records), reads, indexes, rolls, truncation and recovery keep them.

// followerOptions are small segments with dense indexes, so that a few
// replicated batches roll across gaps and index entries follow gaps.
func followerOptions(t *testing.T) Options {
	o := testOptions(t)
	o.SegmentBytes = 400
	o.IndexIntervalBytes = 60
	return o
}

// appendGapped appends, in one AppendReplicated call, a batch of recs
// records after each gap in gaps, from End() on, stamped ts0, ts0+1, ...;
// it returns the batches.
func appendGapped(t fataler, l *Log, ts0 int64, recs int, gaps ...base.Offset) [][]byte {
	t.Helper()
	var out [][]byte
	at := l.End()
	for i, g := range gaps {
		b := makeBatch(at+g, recs, 30, ts0+int64(i))
		out = append(out, b)
		at = headerOf(b).NextOffset()
	}
	if err := l.AppendReplicated(concat(out)); err != nil {
		t.Fatalf("AppendReplicated(gaps %v at %d): %v", gaps, l.End(), err)
	}
	return out
}

// buildFollowerLog appends, one call per group, batches with gaps of 0 to
// 4 offsets before them (the first past the base offset), enough to roll
// several segments, and returns the batches.
func buildFollowerLog(t *testing.T, l *Log) [][]byte {
	t.Helper()
	model := appendGapped(t, l, 1000, 2, 3)
	model = append(model, appendGapped(t, l, 1001, 2, 0, 4, 1, 0, 7)...)
	for i := range 14 {
		model = append(model, appendGapped(t, l, 1010+int64(i)*5, 1+i%3, base.Offset(i%5), base.Offset(i%2))...)
	}
	return model
}

// checkRollBases checks that every segment after the first starts where
// the data of the one before ends, as a roll at an append leaves it (gaps
// lie inside segments), and that some start before their first batch.
func checkRollBases(t *testing.T, l *Log, model [][]byte) {
	t.Helper()
	segs := l.Segments()
	if len(segs) < 3 {
		t.Fatalf("%d segments; the log was meant to roll", len(segs))
	}
	gapsAtStart := 0
	for _, s := range segs[1:] {
		k := servingBatch(model, s.BaseOffset)
		if k == 0 || headerOf(model[k-1]).NextOffset() != s.BaseOffset {
			t.Fatalf("segment %+v does not start where the data before it ends", s)
		}
		if k < len(model) && headerOf(model[k]).BaseOffset > s.BaseOffset {
			gapsAtStart++
		}
	}
	if gapsAtStart == 0 {
		t.Fatal("no segment rolled across a gap")
	}
}

// checkIndexes checks every segment's indexes against its .log: each
// offset index entry points at the first byte of a batch whose base
// offset is the entry's, entries ascend; each time index entry names the
// first batch whose max timestamp reached the entry's timestamp, which is
// the largest so far.
func checkIndexes(t *testing.T, l *Log) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.mu.segs {
		type batchAt struct {
			base  base.Offset
			maxTs int64
		}
		byPos := map[uint32]base.Offset{}
		var batches []batchAt
		var scratch [record.HeaderSize]byte
		for pos := int64(0); pos < s.sizeBytes; {
			h, err := readHeaderAt(s.file, pos, s.sizeBytes, scratch[:])
			if err != nil {
				t.Fatalf("segment %d at %d: %v", s.baseOffset, pos, err)
			}
			byPos[uint32(pos)] = h.BaseOffset
			batches = append(batches, batchAt{h.BaseOffset, h.MaxTimestamp})
			pos += int64(h.Size())
		}
		for i, e := range s.offsetIndex.entries {
			if b, ok := byPos[e.pos]; !ok || b != s.baseOffset+base.Offset(e.rel) || i > 0 && e.rel <= s.offsetIndex.entries[i-1].rel {
				t.Fatalf("segment %d: offset index entry %d {%d, %d} does not point at its batch (%d, %v)", s.baseOffset, i, e.rel, e.pos, b, ok)
			}
		}
		for i, e := range s.timeIndex.entries {
			maxSoFar, found := int64(math.MinInt64), false
			for _, b := range batches {
				if b.maxTs > maxSoFar {
					maxSoFar = b.maxTs
					if b.maxTs == e.ts {
						found = b.base == s.baseOffset+base.Offset(e.rel)
						break
					}
				}
			}
			if !found {
				t.Fatalf("segment %d: time index entry %d {%d, %d} does not name the first batch reaching it", s.baseOffset, i, e.ts, e.rel)
			}
		}
	}
}

func TestAppendReplicatedTakesGaps(t *testing.T) {
	l := mustOpen(t, followerOptions(t))
	defer l.Close()
	model := buildFollowerLog(t, l)
	if got := l.End(); got != headerOf(model[len(model)-1]).NextOffset() {
		t.Fatalf("End %d, want the last batch's next offset", got)
	}
	checkRollBases(t, l, model)
	checkIndexes(t, l)
	checkGapReads(t, l, model, true)

	end := l.End()
	last := headerOf(model[len(model)-1])
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"overlapping the log", makeBatch(last.LastOffset(), 2, 10, 1000)},
		{"below the log end", makeBatch(last.BaseOffset, 1, 10, 1000)},
		{"overlapping each other", concat([][]byte{makeBatch(end+2, 2, 10, 1000), makeBatch(end+3, 1, 10, 1000)})},
		{"going back", concat([][]byte{makeBatch(end+5, 1, 10, 1000), makeBatch(end+1, 1, 10, 1000)})},
	} {
		if err := l.AppendReplicated(tc.in); !errors.Is(err, ErrNotContiguous) {
			t.Fatalf("%s: %v, want ErrNotContiguous", tc.name, err)
		}
		if l.End() != end {
			t.Fatalf("%s: End %d after a refused append, want %d", tc.name, l.End(), end)
		}
	}
	// A leader's Append still wants End exactly, gaps or not before it.
	if err := l.Append(makeBatch(end+1, 1, 10, 1000)); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("Append past End: %v, want ErrNotContiguous", err)
	}
	b := makeBatch(end, 1, 10, 1100)
	if err := l.Append(b); err != nil {
		t.Fatalf("Append at End after gaps: %v", err)
	}
	model = append(model, b)
	checkIndexes(t, l)
	checkGapReads(t, l, model, true)
}

func TestAppendReplicatedDoesNotAllocate(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 1 << 30
	o.IndexIntervalBytes = 1 << 30
	l := mustOpen(t, o)
	defer l.Close()
	batch := benchBatch()
	allocs := testing.AllocsPerRun(100, func() {
		record.SetBaseOffset(batch, l.End()+3)
		if err := l.AppendReplicated(batch); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("AppendReplicated allocates %.1f times per call", allocs)
	}
}

// TestReplicatedGapsSurviveReopen: a log with gaps, synced in the middle
// (so that recovery trusts the segments below the recovery point and
// scans the rest), reopens after a clean close or a crash, with or without
// its index files or recovery point, with the same batches, segments and
// reads.
func TestReplicatedGapsSurviveReopen(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		clean, noRP, noIndexes bool
	}{
		{name: "clean", clean: true},
		{name: "crashed"},
		{name: "crashed_without_recovery_point", noRP: true},
		{name: "clean_without_indexes", clean: true, noIndexes: true},
		{name: "crashed_without_indexes", noIndexes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := followerOptions(t)
			l := mustOpen(t, o)
			model := appendGapped(t, l, 1000, 2, 3, 0, 4)
			for i := range 6 {
				model = append(model, appendGapped(t, l, 1010+int64(i)*5, 1+i%3, base.Offset(i%5), 2)...)
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				model = append(model, appendGapped(t, l, 1050+int64(i)*5, 2, base.Offset(i%3), 1)...)
			}
			segs, end := l.Segments(), l.End()
			if tc.clean {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				rp, _, _ := readRecoveryPoint(vfs.Default, o.Dir)
				if rp >= segs[len(segs)-2].BaseOffset {
					t.Fatalf("recovery point %d: the crash was meant to leave segments to scan", rp)
				}
				l.crash()
			}
			if tc.noRP {
				if err := os.Remove(filepath.Join(o.Dir, recoveryPointName)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.noIndexes {
				removeIndexFiles(t, o.Dir)
			}
			l = mustOpen(t, o)
			defer l.Close()
			if l.End() != end || l.DurableEnd() != end {
				t.Fatalf("End %d, DurableEnd %d after reopen, want %d", l.End(), l.DurableEnd(), end)
			}
			got := l.Segments()
			if len(got) != len(segs) {
				t.Fatalf("%d segments after reopen, want %d", len(got), len(segs))
			}
			for i := range segs {
				if got[i].BaseOffset != segs[i].BaseOffset || got[i].NextOffset != segs[i].NextOffset || got[i].SizeBytes != segs[i].SizeBytes {
					t.Fatalf("segment %d is %+v after reopen, was %+v", i, got[i], segs[i])
				}
			}
			checkIndexes(t, l)
			checkGapReads(t, l, model, true)
			model = append(model, appendGapped(t, l, 1100, 1, 6)...)
			checkGapReads(t, l, model, true)
		})
	}
}

// TestFollowerOfCompactedLog: a follower fetches a compacted leader's log
// (gaps inside and at the ends of its sealed segments, an empty segment)
// with reads of random sizes from random offsets inside the gaps and
// appends what it gets: it holds the leader's batches byte for byte and
// serves the same reads, also after a crash in the middle.
func TestFollowerOfCompactedLog(t *testing.T) {
	leader := buildGapLog(t, gapOptions(t))
	defer leader.l.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 20 {
		o := followerOptions(t)
		o.SegmentBytes = int64(200 + rng.IntN(600))
		f := mustOpen(t, o)
		crashAt := rng.IntN(len(leader.model))
		for f.End() < leader.l.End() {
			from := f.End()
			if n := servingBatch(leader.model, from); n < len(leader.model) && rng.IntN(3) == 0 {
				// A fetch from inside the gap before the next batch, as a
				// fetcher that is at a gap's start asks.
				if b := headerOf(leader.model[n]).BaseOffset; b > from {
					from += base.Offset(rng.Int64N(int64(b - from)))
				}
			}
			got, err := leader.l.Read(from, rng.IntN(400), nil)
			if err != nil {
				t.Fatalf("round %d: leader Read(%d): %v", round, from, err)
			}
			got = got[:wholeBatchesPrefix(got)]
			if len(got) == 0 {
				t.Fatalf("round %d: leader Read(%d) found nothing below its end %d", round, from, leader.l.End())
			}
			if err := f.AppendReplicated(got); err != nil {
				t.Fatalf("round %d: AppendReplicated at %d: %v", round, f.End(), err)
			}
			if servingBatch(leader.model, f.End()) > crashAt {
				crashAt = len(leader.model)
				f.crash()
				f = mustOpen(t, o)
			}
		}
		if f.End() != leader.l.End() {
			t.Fatalf("round %d: the follower ends at %d, the leader at %d", round, f.End(), leader.l.End())
		}
		checkIndexes(t, f)
		checkGapReads(t, f, leader.model, true)
		f.Close()
	}
}

// batchFile is where model[k] is on disk in a log with segments segs.
func batchFile(o Options, segs []SegmentInfo, model [][]byte, k int) (string, int64) {
	h := headerOf(model[k])
	for _, s := range segs {
		if h.BaseOffset < s.BaseOffset || h.BaseOffset >= s.NextOffset {
			continue
		}
		pos := int64(0)
		for _, b := range model[:k] {
			if bh := headerOf(b); bh.BaseOffset >= s.BaseOffset {
				pos += int64(bh.Size())
			}
		}
		return segFile(o, s.BaseOffset, ".log"), pos
	}
	panic("batch outside the segments")
}

// crashedFollowerLog is an unsynced follower's log with gaps, crashed:
// recovery scans every segment.
func crashedFollowerLog(t *testing.T) (Options, [][]byte, []SegmentInfo) {
	o := followerOptions(t)
	l := mustOpen(t, o)
	model := buildFollowerLog(t, l)
	segs := l.Segments()
	l.crash()
	return o, model, segs
}

// expectRecovered reopens the log and checks that it holds want (with
// their gaps), ends at the last one's end, and takes replicated appends.
func expectRecovered(t *testing.T, o Options, want [][]byte) *Log {
	t.Helper()
	l := mustOpen(t, o)
	t.Cleanup(func() { l.Close() })
	if got := readBatches(t, l); !bytes.Equal(concat(got), concat(want)) {
		t.Fatalf("recovered %d batches, want %d", len(got), len(want))
	}
	wantEnd := headerOf(want[len(want)-1]).NextOffset()
	if l.End() != wantEnd || l.DurableEnd() != wantEnd {
		t.Fatalf("End %d DurableEnd %d, want %d", l.End(), l.DurableEnd(), wantEnd)
	}
	checkIndexes(t, l)
	checkGapReads(t, l, want, true)
	appendGapped(t, l, 1200, 1, 2)
	return l
}

func TestRecoveryKeepsGapsBeforeATornTail(t *testing.T) {
	o, model, segs := crashedFollowerLog(t)
	k := len(model) - 1
	p, pos := batchFile(o, segs, model, k)
	if err := os.Truncate(p, pos+int64(len(model[k]))/2); err != nil {
		t.Fatal(err)
	}
	expectRecovered(t, o, model[:k])
}

func TestRecoveryKeepsGapsBeforeAFlippedBit(t *testing.T) {
	o, model, segs := crashedFollowerLog(t)
	// A batch in the middle of the segment before the last: that segment
	// is cut there and the last one goes.
	prev := segs[len(segs)-2]
	k := servingBatch(model, prev.BaseOffset) + 1
	if headerOf(model[k]).NextOffset() >= prev.NextOffset {
		t.Fatal("the segment before the last holds fewer than three batches")
	}
	p, pos := batchFile(o, segs, model, k)
	b := mustRead(t, p)
	b[pos+int64(len(model[k]))-5] ^= 0x04 // in its records: the CRC fails
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	expectRecovered(t, o, model[:k])
	if exists(segFile(o, segs[len(segs)-1].BaseOffset, ".log")) {
		t.Fatal("the segment after the cut is still there")
	}
}

// The CRC does not cover a batch's base offset: recovery tells a damaged
// one only by where it lies. One that overlaps the batch before, or goes
// back, is cut with everything after it; one raised to where a gap could
// be is kept at its new offsets (as in Kafka), and the batch after it,
// which it now overlaps, is cut.
func TestRecoveryCutsABaseOffsetThatOverlaps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rebase  func(prev, h record.Header) base.Offset
		raised  bool
		atLastK bool
	}{
		{name: "overlapping", rebase: func(prev, _ record.Header) base.Offset { return prev.LastOffset() }},
		{name: "going back", rebase: func(prev, _ record.Header) base.Offset { return prev.BaseOffset - 1 }},
		{name: "raised", rebase: func(_, h record.Header) base.Offset { return h.BaseOffset + 1000 }, raised: true},
		{name: "raised_last", rebase: func(_, h record.Header) base.Offset { return h.BaseOffset + 1000 }, raised: true, atLastK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, model, segs := crashedFollowerLog(t)
			last := segs[len(segs)-1]
			k := servingBatch(model, last.BaseOffset) + 1
			if tc.atLastK {
				k = len(model) - 1
			}
			h := headerOf(model[k])
			p, pos := batchFile(o, segs, model, k)
			b := mustRead(t, p)
			at := tc.rebase(headerOf(model[k-1]), h)
			record.SetBaseOffset(b[pos:], at)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			want := model[:k:k]
			if tc.raised {
				want = append(want, b[pos:pos+int64(len(model[k]))])
			}
			expectRecovered(t, o, want)
		})
	}
}

// A sealed segment's last batch raised by one offset runs into its
// successor's range: recovery cuts it there, with every later segment.
func TestRecoveryCutsABatchThatRunsIntoItsSuccessor(t *testing.T) {
	o, model, segs := crashedFollowerLog(t)
	last := segs[len(segs)-1]
	k := servingBatch(model, last.BaseOffset) - 1
	h := headerOf(model[k])
	if h.NextOffset() != last.BaseOffset {
		t.Fatalf("batch %d ends at %d, not at the last segment's base %d", k, h.NextOffset(), last.BaseOffset)
	}
	p, pos := batchFile(o, segs, model, k)
	b := mustRead(t, p)
	record.SetBaseOffset(b[pos:], h.BaseOffset+1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	expectRecovered(t, o, model[:k])
	if exists(segFile(o, last.BaseOffset, ".log")) {
		t.Fatal("the segment after the cut is still there")
	}
}

// segmentOf is the segment of segs whose range holds o.
func segmentOf(segs []SegmentInfo, o base.Offset) SegmentInfo {
	for _, s := range segs {
		if o >= s.BaseOffset && o < s.NextOffset {
			return s
		}
	}
	panic("offset outside the segments")
}

// checkReadsAt is checkGapReads at the offsets given only, for a log whose
// range is too large to read at every offset.
func checkReadsAt(t *testing.T, l *Log, model [][]byte, offsets ...base.Offset) {
	t.Helper()
	if got := readBatches(t, l); !bytes.Equal(concat(got), concat(model)) {
		t.Fatalf("the log holds %d batches, want %d", len(got), len(model))
	}
	for _, o := range offsets {
		k := servingBatch(model, o)
		got, err := l.Read(o, 1, nil)
		if err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
		if k == len(model) && len(got) != 0 || k < len(model) && !bytes.Equal(got, model[k]) {
			t.Fatalf("Read(%d) = %d bytes, want batch %d of the model", o, len(got), k)
		}
		checkGapRegion(t, l, model, o, l.End(), 1)
		checkGapRegion(t, l, model, o, l.End(), 1<<20)
		var want base.Stamp
		for _, b := range model[k:] {
			if h := headerOf(b); !want.Ok || h.MaxTimestamp > want.Ts {
				want = base.Stamp{Ts: h.MaxTimestamp, Offset: max(h.BaseOffset, o), Ok: true}
			}
		}
		if got, err := l.MaxTimestampFrom(o); err != nil || got != want {
			t.Fatalf("MaxTimestampFrom(%d) = %+v, %v; want %+v", o, got, err, want)
		}
	}
	for i, b := range model {
		h := headerOf(b)
		if off, ts, ok := l.OffsetForTimestamp(h.MaxTimestamp, l.Start()); !ok || ts != h.MaxTimestamp || off != h.BaseOffset {
			t.Fatalf("OffsetForTimestamp(%d) = %d, %d, %v; want batch %d at %d", h.MaxTimestamp, off, ts, ok, i, h.BaseOffset)
		}
	}
}

// TestAppendReplicatedRollsAtALargeGap: a batch whose last offset is past
// the reach of the active segment's index (a relative offset above
// MaxUint32) goes into a new segment that starts at it, even when the
// active segment is empty, and so does one whose base offset is within
// reach but whose last is not. Reads, reopens and a truncation inside the
// large gap keep it.
func TestAppendReplicatedRollsAtALargeGap(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	model := appendGapped(t, l, 1000, 2, 0, 0) // [0,2) [2,4)
	far := base.Offset(math.MaxUint32) + 10
	model = append(model, appendGapped(t, l, 1010, 2, far-4, 1)...) // [far, far+2) [far+3, far+5)
	wantLayout := func(l *Log, want ...base.Range) {
		t.Helper()
		segs := l.Segments()
		if len(segs) != len(want) {
			t.Fatalf("segments %+v, want %v", segs, want)
		}
		for i, s := range segs {
			if s.BaseOffset != want[i].Start || s.NextOffset != want[i].End {
				t.Fatalf("segment %d is [%d, %d), want %v", i, s.BaseOffset, s.NextOffset, want[i])
			}
		}
	}
	wantLayout(l, base.Range{Start: 0, End: far}, base.Range{Start: far, End: far + 5})
	checkIndexes(t, l)
	probes := []base.Offset{0, 3, 4, 5, 1 << 31, 1 << 32, far - 1, far, far + 1, far + 2, far + 4, far + 5}
	checkReadsAt(t, l, model, probes...)

	for _, clean := range []bool{true, false} {
		l.stop(t, clean)
		l = mustOpen(t, o)
		wantLayout(l, base.Range{Start: 0, End: far}, base.Range{Start: far, End: far + 5})
		checkReadsAt(t, l, model, probes...)
	}

	// Inside the large gap, past the reach of the first segment's index:
	// the first segment stays sealed, ending there.
	to := base.Offset(1) << 32
	if err := l.TruncateTo(to); err != nil {
		t.Fatal(err)
	}
	model = model[:2]
	wantLayout(l, base.Range{Start: 0, End: to}, base.Range{Start: to, End: to})
	checkReadsAt(t, l, model, 0, 3, 4, 5, to-1, to)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	wantLayout(l, base.Range{Start: 0, End: to}, base.Range{Start: to, End: to})
	b := makeBatch(to, 1, 10, 1100)
	if err := l.Append(b); err != nil {
		t.Fatal(err)
	}
	checkReadsAt(t, l, append(model, b), 0, 4, to-1, to)

	// An empty active segment rolls too, and a batch whose base offset is
	// within reach but whose last offset is not.
	o2 := testOptions(t)
	l2 := mustOpen(t, o2)
	defer l2.Close()
	edge := base.Offset(math.MaxUint32) - 1
	m2 := appendGapped(t, l2, 1000, 5, edge) // [edge, edge+5)
	wantLayout(l2, base.Range{Start: 0, End: edge}, base.Range{Start: edge, End: edge + 5})
	far2 := edge + 5 + math.MaxUint32 + 1
	m2 = append(m2, appendGapped(t, l2, 1001, 1, far2-(edge+5))...)
	wantLayout(l2, base.Range{Start: 0, End: edge}, base.Range{Start: edge, End: far2}, base.Range{Start: far2, End: far2 + 1})
	checkReadsAt(t, l2, m2, 0, edge-1, edge, edge+4, edge+5, far2-1, far2)
	// A crash before a Sync: recovery keeps a segment that starts past
	// the data before it only once the recovery point covers it (the
	// segments after such a gap held nothing acknowledged).
	l2.crash()
	l2 = mustOpen(t, o2)
	wantLayout(l2, base.Range{Start: 0, End: 0})
	m2 = appendGapped(t, l2, 1000, 5, edge)
	m2 = append(m2, appendGapped(t, l2, 1001, 1, far2-(edge+5))...)
	if err := l2.Sync(); err != nil {
		t.Fatal(err)
	}
	l2.crash()
	l2 = mustOpen(t, o2)
	wantLayout(l2, base.Range{Start: 0, End: edge}, base.Range{Start: edge, End: far2}, base.Range{Start: far2, End: far2 + 1})
	checkReadsAt(t, l2, m2, 0, edge-1, edge, edge+4, edge+5, far2-1, far2)
}

// TestTruncateToGapInActiveSegment: the active segment of a follower has
// gaps; a truncation into one leaves End there, past the data, for the
// next append to continue from; a clean reopen keeps that End, a crash
// brings it back to the data's end (nothing lies in between).
func TestTruncateToGapInActiveSegment(t *testing.T) {
	for _, reopen := range []string{"none", "clean", "crash"} {
		t.Run(reopen, func(t *testing.T) {
			o := testOptions(t)
			l := mustOpen(t, o)
			model := appendGapped(t, l, 1000, 2, 0, 5, 5) // [0,2) [7,9) [14,16)
			if err := l.TruncateTo(8); !errors.Is(err, ErrNotBatchBoundary) {
				t.Fatalf("TruncateTo inside a batch: %v", err)
			}
			if err := l.TruncateTo(11); err != nil {
				t.Fatal(err)
			}
			model = model[:2]
			if l.End() != 11 || l.DurableEnd() > 11 {
				t.Fatalf("End %d DurableEnd %d after TruncateTo(11)", l.End(), l.DurableEnd())
			}
			checkGapReads(t, l, model, true)
			wantEnd := base.Offset(11)
			switch reopen {
			case "clean":
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l = mustOpen(t, o)
			case "crash":
				if err := l.Sync(); err != nil {
					t.Fatal(err)
				}
				l.crash()
				l = mustOpen(t, o)
				wantEnd = 9
			}
			defer l.Close()
			if l.End() != wantEnd {
				t.Fatalf("End %d, want %d", l.End(), wantEnd)
			}
			checkGapReads(t, l, model, true)
			b := makeBatch(wantEnd, 1, 10, 1050) // a leader's append, at End
			if err := l.Append(b); err != nil {
				t.Fatal(err)
			}
			model = append(model, b)
			model = append(model, appendGapped(t, l, 1060, 1, 3)...)
			checkIndexes(t, l)
			checkGapReads(t, l, model, true)
		})
	}
}

// TestTruncateIntoUnsyncedGappedSegment: a truncation into a sealed
// segment with gaps that no Sync covered yet (above the recovery point)
// keeps it sealed, ending at the truncation offset; a crash then recovers
// to its data, or to the truncation offset, never further.
func TestTruncateIntoUnsyncedGappedSegment(t *testing.T) {
	o := followerOptions(t)
	l := mustOpen(t, o)
	model := buildFollowerLog(t, l)
	segs := l.Segments()
	// The last gap of two offsets or more between two batches of a sealed
	// segment.
	k := 0
	for i := 2; i < len(model); i++ {
		h := headerOf(model[i])
		if h.BaseOffset > headerOf(model[i-1]).NextOffset()+1 && h.BaseOffset < segs[len(segs)-2].NextOffset &&
			servingBatch(model, h.BaseOffset-1) == i && headerOf(model[i-1]).BaseOffset >= segmentOf(segs, h.BaseOffset).BaseOffset {
			k = i
		}
	}
	if k == 0 {
		t.Fatal("no gap between two batches of a sealed segment")
	}
	prevEnd, at := headerOf(model[k-1]).NextOffset(), headerOf(model[k]).BaseOffset
	to := at - 1
	if err := l.TruncateTo(to); err != nil {
		t.Fatal(err)
	}
	model = model[:k]
	if l.End() != to {
		t.Fatalf("End %d, want %d", l.End(), to)
	}
	after := l.Segments()
	if n := len(after); after[n-1].BaseOffset != to || after[n-1].SizeBytes != 0 || after[n-2].NextOffset != to {
		t.Fatalf("segments %+v after TruncateTo(%d): want the cut one sealed, ending there", after, to)
	}
	checkGapReads(t, l, model, true)
	l.crash()
	l = mustOpen(t, o)
	defer l.Close()
	if end := l.End(); end != to && end != prevEnd {
		t.Fatalf("End %d after a crash, want %d or %d", end, to, prevEnd)
	}
	checkIndexes(t, l)
	checkGapReads(t, l, model, true)
}

// TestAppendReplicatedKeepsABatchAtTheIndexReach: a batch whose last
// offset is exactly MaxUint32 past its segment's base still fits that
// segment's index (no roll), and a truncation to it drops its index
// entries, so nothing names the cut batch.
func TestAppendReplicatedKeepsABatchAtTheIndexReach(t *testing.T) {
	o := testOptions(t)
	o.IndexIntervalBytes = 0 // an entry for every batch but a segment's first
	l := mustOpen(t, o)
	defer func() { l.Close() }()
	reach := base.Offset(math.MaxUint32)
	model := appendGapped(t, l, 1000, 1, 0, reach-2)         // [0,1) [Max-1, Max)
	model = append(model, appendGapped(t, l, 1002, 1, 0)...) // [Max, Max+1): relative offset Max
	if segs := l.Segments(); len(segs) != 1 || segs[0].NextOffset != reach+1 {
		t.Fatalf("segments %+v, want one, [0, %d)", segs, reach+1)
	}
	checkIndexes(t, l)
	checkReadsAt(t, l, model, 0, 1, reach-1, reach, reach+1)
	if err := l.TruncateTo(reach); err != nil {
		t.Fatal(err)
	}
	model = model[:2]
	checkIndexes(t, l)
	checkReadsAt(t, l, model, 0, reach-1, reach)
	l.stop(t, true)
	l = mustOpen(t, o)
	checkIndexes(t, l)
	checkReadsAt(t, l, model, 0, reach-1, reach)
}

// TestRollPutsASmallGapInTheNewSegment: a roll (here for segment.bytes)
// before a batch that a gap separates from the data starts the new
// segment at the data's end, so the gap lies inside it, as long as the
// batch is within the new segment's index reach — at high offsets too,
// and at exactly MaxUint32 past the data's end.
func TestRollPutsASmallGapInTheNewSegment(t *testing.T) {
	const high = base.Offset(3_000_000_000)
	for _, tc := range []struct {
		name string
		gaps []base.Offset
		want []base.Range
	}{
		{
			name: "at high offsets",
			gaps: []base.Offset{0, high, 5}, // [0,1) [high+1, high+2) [high+7, high+8)
			want: []base.Range{{Start: 0, End: 1}, {Start: 1, End: high + 2}, {Start: high + 2, End: high + 8}},
		},
		{
			name: "at the index's reach",
			gaps: []base.Offset{0, 3, math.MaxUint32}, // [0,1) [4,5) [5+Max, 6+Max)
			want: []base.Range{{Start: 0, End: 1}, {Start: 1, End: 5}, {Start: 5, End: 6 + math.MaxUint32}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t)
			o.SegmentBytes = record.HeaderSize // every batch rolls a non-empty segment
			l := mustOpen(t, o)
			defer func() { l.Close() }()
			model := appendGapped(t, l, 1000, 1, tc.gaps...)
			var got []base.Range
			for _, s := range l.Segments() {
				got = append(got, base.Range{Start: s.BaseOffset, End: s.NextOffset})
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("segments %v, want %v", got, tc.want)
			}
			checkIndexes(t, l)
			var probes []base.Offset
			for _, b := range model {
				probes = append(probes, headerOf(b).BaseOffset)
			}
			checkReadsAt(t, l, model, probes...)
			// A reopen, clean (the indexes are trusted) or after a crash
			// (the last segment is scanned), keeps every batch, the one
			// at a relative offset of exactly MaxUint32 included.
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			for _, clean := range []bool{true, false} {
				l.stop(t, clean)
				l = mustOpen(t, o)
				checkReadsAt(t, l, model, probes...)
			}
		})
	}
}
