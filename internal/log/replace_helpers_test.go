package log

import (
	"bytes"
	"os"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// gapLog is a log whose sealed segments were compacted, and a model of it.
type gapLog struct {
	o     Options
	l     *Log
	model [][]byte // the batches the log holds, in order
}

// gapSegBatches is the number of 2-record batches per sealed segment of a
// gapLog: each sealed segment spans 12 offsets.
const gapSegBatches = 6

// gapTs is the max timestamp of the i-th batch appended to a gapLog; it
// goes up and down, so that the time index has work to do.
func gapTs(i int) int64 { return 1000 + int64((i*7)%13)*10 }

// keepPlan says what a replacement keeps of a segment's batches, by index:
// 'k' keeps the batch, 'd' drops it, 's' shrinks it to its first record
// (same base offset, a gap after it).
type keepPlan string

// buildGapLog appends five sealed segments [0,12) [12,24) [24,36) [36,48)
// [48,60) of six 2-record batches and an active one [60,66), then replaces
// them with copies that drop and shrink batches:
//
//	[0,12)         middle batches dropped, one shrunk
//	[12,24)        the last two batches dropped (a gap at the end)
//	[24,36)        every batch dropped (an empty segment)
//	[36,48)+[48,60) merged into one; the first batch dropped (a gap at the
//	               start), one shrunk, the last dropped
func buildGapLog(t *testing.T, o Options) *gapLog {
	t.Helper()
	g := &gapLog{o: o, l: mustOpen(t, o)}
	var orig [][]byte
	for seg := 0; seg < 6; seg++ {
		n := gapSegBatches
		if seg == 5 {
			n = 3
		}
		if seg > 0 {
			if err := g.l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		for range n {
			b := makeBatch(g.l.End(), 2, 30, gapTs(len(orig)))
			if err := g.l.Append(b); err != nil {
				t.Fatal(err)
			}
			orig = append(orig, b)
		}
	}
	if err := g.l.Sync(); err != nil {
		t.Fatal(err)
	}
	plans := []struct {
		bases []base.Offset
		plan  keepPlan
	}{
		{[]base.Offset{0}, "kdd" + "skk"},
		{[]base.Offset{12}, "kkkkdd"},
		{[]base.Offset{24}, "dddddd"},
		{[]base.Offset{36, 48}, "dkkkkk" + "dksk" + "kd"},
	}
	for _, p := range plans {
		first := int(p.bases[0]) / 2
		kept := applyPlan(orig[first:first+len(p.plan)], p.plan)
		replaceWith(t, g.l, p.bases, kept, len(p.bases) > 1)
		g.model = append(g.model, kept...)
	}
	g.model = append(g.model, orig[30:]...)
	return g
}

// applyPlan returns what plan keeps of batches.
func applyPlan(batches [][]byte, plan keepPlan) [][]byte {
	var out [][]byte
	for i, b := range batches {
		switch plan[i] {
		case 'k':
			out = append(out, b)
		case 's':
			h, _ := record.ParseHeader(b)
			out = append(out, makeBatch(h.BaseOffset, 1, 30, h.MaxTimestamp))
		}
	}
	return out
}

// replaceWith replaces the segments at bases with kept, one Append per
// batch or all at once.
func replaceWith(t *testing.T, l *Log, bases []base.Offset, kept [][]byte, oneByOne bool) {
	t.Helper()
	r, err := l.BeginReplacement(bases)
	if err != nil {
		t.Fatalf("BeginReplacement(%v): %v", bases, err)
	}
	defer r.Abort()
	if oneByOne {
		for _, b := range kept {
			if err := r.Append(b); err != nil {
				t.Fatalf("Replacement.Append: %v", err)
			}
		}
	} else if len(kept) > 0 {
		if err := r.Append(concat(kept)); err != nil {
			t.Fatalf("Replacement.Append: %v", err)
		}
	}
	if err := r.Commit(); err != nil {
		t.Fatalf("Commit(%v): %v", bases, err)
	}
}

// readBatches reads the whole log, following gaps, and splits it into
// batches.
func readBatches(t fataler, l *Log) [][]byte {
	t.Helper()
	var out [][]byte
	for o := l.Start(); o < l.End(); {
		b, err := l.Read(o, 1<<30, nil)
		if err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
		if len(b) == 0 {
			break
		}
		for it := record.SplitBatches(b); ; {
			batch, h, ok := it.Next()
			if !ok {
				break
			}
			if h.NextOffset() <= o {
				t.Fatalf("Read(%d) returned batch [%d, %d) that ends before it", o, h.BaseOffset, h.NextOffset())
			}
			out = append(out, batch)
			o = h.NextOffset()
		}
	}
	return out
}

func headerOf(b []byte) record.Header {
	h, err := record.ParseHeader(b)
	if err != nil {
		panic(err)
	}
	return h
}

// servingBatch is the index in model of the first batch whose last offset
// is at or after o, or len(model).
func servingBatch(model [][]byte, o base.Offset) int {
	for k, b := range model {
		if headerOf(b).NextOffset() > o {
			return k
		}
	}
	return len(model)
}

// checkGapReads checks every read path of l against model at every offset:
// Read, ReadRegion (if the FS has descriptors), OffsetForTimestamp and
// MaxTimestampFrom must all serve the first batch whose last offset is at
// or after the offset asked for; the segments must tile the offset space.
func checkGapReads(t *testing.T, l *Log, model [][]byte, regions bool) {
	t.Helper()
	start, end := l.Start(), l.End()
	segs := l.Segments()
	for i := 1; i < len(segs); i++ {
		if segs[i].BaseOffset != segs[i-1].NextOffset || segs[i].BaseOffset < segs[i-1].BaseOffset {
			t.Fatalf("segments do not tile the offsets: %+v", segs)
		}
	}
	if got := readBatches(t, l); !bytes.Equal(concat(got), concat(model)) {
		t.Fatalf("the log holds %d batches (%d bytes), want %d (%d bytes)", len(got), len(concat(got)), len(model), len(concat(model)))
	}
	for o := start; o <= end; o++ {
		k := servingBatch(model, o)
		got, err := l.Read(o, 1, nil)
		if err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
		if k == len(model) && len(got) != 0 || k < len(model) && !bytes.Equal(got, model[k]) {
			t.Fatalf("Read(%d, 1 byte) = %d bytes, want batch %d of the model", o, len(got), k)
		}
		all, err := l.Read(o, 1<<30, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rest := concat(model[k:]); !bytes.HasPrefix(rest, all) || (k < len(model) && len(all) < len(model[k])) {
			t.Fatalf("Read(%d) is not a run of whole batches from model batch %d", o, k)
		}
		if regions {
			for _, below := range []base.Offset{o + 1, o + 5, end, end + 3} {
				for _, maxBytes := range []int{1, 250, 1 << 20} {
					checkGapRegion(t, l, model, o, below, maxBytes)
				}
			}
		}
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
	for ts := int64(990); ts <= 1130; ts += 5 {
		wantOff, wantTs, wantOK := base.Offset(0), int64(0), false
		for _, b := range model {
			if h := headerOf(b); h.MaxTimestamp >= ts {
				wantOff, wantTs, wantOK = h.BaseOffset, h.MaxTimestamp, true
				break
			}
		}
		off, got, ok := l.OffsetForTimestamp(ts, l.Start())
		if off != wantOff || got != wantTs || ok != wantOK {
			t.Fatalf("OffsetForTimestamp(%d) = %d, %d, %v; want %d, %d, %v", ts, off, got, ok, wantOff, wantTs, wantOK)
		}
	}
}

// checkGapRegion checks ReadRegion(from, below, maxBytes) against model.
func checkGapRegion(t *testing.T, l *Log, model [][]byte, from, below base.Offset, maxBytes int) {
	t.Helper()
	r, err := l.ReadRegion(from, below, maxBytes)
	if err != nil {
		t.Fatalf("ReadRegion(%d, %d, %d): %v", from, below, maxBytes, err)
	}
	got := readRegion(t, r)
	k := servingBatch(model, from)
	read, err := l.Read(from, 1<<30, nil) // checked against model by the caller
	if err != nil {
		t.Fatal(err)
	}
	want := batchesBelow(read, below)
	if len(want) == 0 {
		if len(got) != 0 || r.Next != from {
			t.Fatalf("ReadRegion(%d, %d, %d) = %d bytes, Next %d; want empty, Next %d", from, below, maxBytes, len(got), r.Next, from)
		}
		return
	}
	if len(got) == 0 || !bytes.HasPrefix(want, got) || !bytes.HasPrefix(got, model[k]) {
		t.Fatalf("ReadRegion(%d, %d, %d) is not a non-empty run of whole batches from model batch %d", from, below, maxBytes, k)
	}
	if maxBytes >= len(want) && len(got) != len(want) {
		t.Fatalf("ReadRegion(%d, %d, %d) holds %d bytes, want all %d that Read returns below %d", from, below, maxBytes, len(got), len(want), below)
	}
	// Next is past the region's last batch and at or before the next
	// batch of the log.
	n := k
	for size := 0; size < len(got); n++ {
		size += len(model[n])
	}
	lo, hi := headerOf(model[n-1]).NextOffset(), l.End()
	if n < len(model) {
		hi = headerOf(model[n]).BaseOffset
	}
	if r.Next < lo || r.Next > hi {
		t.Fatalf("ReadRegion(%d, %d, %d).Next = %d, want in [%d, %d]", from, below, maxBytes, r.Next, lo, hi)
	}
}

// removeIndexFiles deletes every .index and .timeindex file in dir.
func removeIndexFiles(t *testing.T, dir string) {
	t.Helper()
	for _, n := range dirNames(t, dir) {
		if _, suffix, ok := parseSegmentName(n); ok && suffix != logSuffix {
			if err := os.Remove(dir + "/" + n); err != nil {
				t.Fatal(err)
			}
		}
	}
}
