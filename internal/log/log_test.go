package log

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/invariants"
	"github.com/strata-broker/strata/internal/record"
)

func TestAppendReadRoundTrip(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	batches := appendN(t, l, 50, 5, 100, 1000)
	if l.Start() != 0 || l.End() != 250 {
		t.Fatalf("range [%d, %d), want [0, 250)", l.Start(), l.End())
	}
	if got := readAll(t, l); !bytes.Equal(got, concat(batches)) {
		t.Fatal("read bytes differ from appended bytes")
	}
	for o := base.Offset(0); o < 250; o++ {
		got, err := l.Read(o, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := batches[o/5]; !bytes.Equal(got, want) {
			t.Fatalf("Read(%d) did not return exactly the batch containing it", o)
		}
	}
}

func TestReadFromMiddleOfBatchStartsAtContainingBatch(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	batches := appendN(t, l, 3, 10, 10, 0)
	got, err := l.Read(15, 1<<20, []byte("prefix"))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte("prefix"), concat(batches[1:])...)
	if !bytes.Equal(got, want) {
		t.Fatalf("Read(15) = %d bytes, want %d (appended to buf, from batch [10,20))", len(got), len(want))
	}
}

func TestReadMaxBytes(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	batches := appendN(t, l, 4, 1, 200, 0)
	size := len(batches[0])
	for _, tc := range []struct {
		maxBytes, wantBatches int
	}{
		{0, 1}, {1, 1}, {size, 1}, {size + size/2, 1}, {2 * size, 2}, {10 * size, 4},
	} {
		got, err := l.Read(0, tc.maxBytes, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, concat(batches[:tc.wantBatches])) {
			t.Errorf("maxBytes %d: got %d bytes, want %d batches", tc.maxBytes, len(got), tc.wantBatches)
		}
	}
}

func TestReadOutOfRange(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	appendN(t, l, 2, 1, 10, 0)
	if got, err := l.Read(2, 100, nil); err != nil || len(got) != 0 {
		t.Fatalf("Read(End) = %d bytes, %v; want none, nil", len(got), err)
	}
	if _, err := l.Read(3, 100, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read(End+1) err = %v", err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 2, 1, 10, 0)
	if err := l.DeleteSegmentsBefore(2); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(1, 100, nil); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read below Start err = %v", err)
	}
}

func TestAppendRejectsBadBatches(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	appendN(t, l, 1, 3, 10, 0)
	gap := makeBatch(4, 1, 10, 0)
	if err := l.Append(gap); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("gap: %v", err)
	}
	if invariants.Enabled {
		bad := makeBatch(3, 1, 10, 0)
		bad[len(bad)-1] ^= 1
		if err := l.Append(bad); !errors.Is(err, ErrInvalidBatch) {
			t.Fatalf("bad crc: %v", err)
		}
	}
	for _, empty := range [][]byte{nil, {}} {
		if err := l.Append(empty); !errors.Is(err, ErrInvalidBatch) {
			t.Fatalf("no batches: %v", err)
		}
	}
	two := append(makeBatch(3, 1, 10, 0), makeBatch(4, 1, 10, 0)...)
	if err := l.Append(two[:len(two)-1]); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("torn: %v", err)
	}
	if l.End() != 3 {
		t.Fatalf("rejected appends changed End to %d", l.End())
	}
	if err := l.Append(two); err != nil || l.End() != 5 {
		t.Fatalf("two batches: %v, End %d", err, l.End())
	}
}

func TestRollOnSize(t *testing.T) {
	o := testOptions(t)
	size := len(makeBatch(0, 1, 100, 0))
	o.SegmentBytes = int64(3*size + size/2)
	l := mustOpen(t, o)
	defer l.Close()
	batches := appendN(t, l, 10, 1, 100, 0)
	segs := l.Segments()
	wantBases := []base.Offset{0, 3, 6, 9}
	if len(segs) != len(wantBases) {
		t.Fatalf("%d segments, want %d", len(segs), len(wantBases))
	}
	for i, s := range segs {
		if s.BaseOffset != wantBases[i] || s.SizeBytes > o.SegmentBytes || s.Active != (i == len(segs)-1) {
			t.Errorf("segment %d = %+v", i, s)
		}
		if !exists(segFile(o, s.BaseOffset, ".log")) || !exists(segFile(o, s.BaseOffset, ".index")) || !exists(segFile(o, s.BaseOffset, ".timeindex")) {
			t.Errorf("segment %d files missing", i)
		}
	}
	if !bytes.Equal(readAll(t, l), concat(batches)) {
		t.Fatal("read across segments differs")
	}
}

func TestOversizedBatchGoesIntoEmptySegment(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 100
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 3, 1, 500, 0)
	if n := len(l.Segments()); n != 3 {
		t.Fatalf("%d segments, want one per oversized batch", n)
	}
}

func TestRollOnAge(t *testing.T) {
	o := testOptions(t)
	o.SegmentMaxAge = time.Hour
	c := o.Clock.(*clock.Manual)
	l := mustOpen(t, o)
	defer l.Close()
	c.Advance(2 * time.Hour) // an empty segment does not age
	appendN(t, l, 2, 1, 10, 0)
	c.Advance(time.Hour)
	appendN(t, l, 1, 1, 10, 0)
	if n := len(l.Segments()); n != 1 {
		t.Fatalf("rolled at exactly segment.ms: %d segments", n)
	}
	c.Advance(time.Millisecond)
	appendN(t, l, 1, 1, 10, 0)
	segs := l.Segments()
	if len(segs) != 2 || segs[1].BaseOffset != 3 {
		t.Fatalf("segments %+v, want a roll at offset 3", segs)
	}
}

// TestNoRollOnAgeWhenSegmentMaxAgeIsZero: zero is "never", not "at once".
func TestNoRollOnAgeWhenSegmentMaxAgeIsZero(t *testing.T) {
	o := testOptions(t)
	o.SegmentMaxAge = 0
	c := o.Clock.(*clock.Manual)
	l := mustOpen(t, o)
	defer l.Close()
	for range 3 {
		appendN(t, l, 1, 1, 10, 0)
		c.Advance(1000 * time.Hour)
	}
	if n := len(l.Segments()); n != 1 {
		t.Fatalf("%d segments with segment.ms 0, want 1", n)
	}
}

func TestRollWhenIndexFull(t *testing.T) {
	o := testOptions(t)
	o.IndexIntervalBytes = 0 // an entry for every batch but a segment's first
	o.SegmentIndexBytes = 3 * offsetEntrySize
	l := mustOpen(t, o)
	defer l.Close()
	batches := appendN(t, l, 7, 1, 10, 0)
	// 3 offset entries fit 24 bytes but 2 time entries do: the time index fills first.
	segs := l.Segments()
	if len(segs) != 3 || segs[1].BaseOffset != 3 || segs[2].BaseOffset != 6 {
		t.Fatalf("segments %+v, want rolls at 3 and 6", segs)
	}
	if !bytes.Equal(readAll(t, l), concat(batches)) {
		t.Fatal("read differs")
	}
}

// TestRollWhenTheNextBatchWouldPassSegmentBytes: a segment fills up to
// exactly segment.bytes, and rolls only for a batch that would pass it
// (Kafka's size > segment.bytes - batch size).
func TestRollWhenTheNextBatchWouldPassSegmentBytes(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = int64(2 * len(makeBatch(0, 1, 10, 0)))
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 5, 1, 10, 0)
	segs := l.Segments()
	if len(segs) != 3 || segs[1].BaseOffset != 2 || segs[2].BaseOffset != 4 {
		t.Fatalf("segments %+v, want rolls at 2 and 4", segs)
	}
}

// TestRollWhenOffsetIndexFull: batches of one timestamp add one time index
// entry, so the offset index fills first, and the segment rolls when it
// holds exactly its room (3 entries in 24 bytes).
func TestRollWhenOffsetIndexFull(t *testing.T) {
	o := testOptions(t)
	o.IndexIntervalBytes = 0 // an entry for every batch but a segment's first
	o.SegmentIndexBytes = 3 * offsetEntrySize
	l := mustOpen(t, o)
	defer l.Close()
	for range 9 {
		if err := l.Append(makeBatch(l.End(), 1, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	segs := l.Segments()
	if len(segs) != 3 || segs[1].BaseOffset != 4 || segs[2].BaseOffset != 8 {
		t.Fatalf("segments %+v, want rolls at 4 and 8", segs)
	}
}

func TestSparseIndexLookups(t *testing.T) {
	o := testOptions(t)
	size := len(makeBatch(0, 2, 50, 0))
	o.IndexIntervalBytes = 2*size + 1 // an entry every third batch
	l := mustOpen(t, o)
	defer l.Close()
	batches := appendN(t, l, 20, 2, 50, 0)
	l.mu.Lock()
	s := l.activeLocked()
	entries := append([]offsetEntry(nil), s.offsetIndex.entries...)
	l.mu.Unlock()
	if len(entries) != 6 {
		t.Fatalf("%d index entries, want 6: %+v", len(entries), entries)
	}
	for i, e := range entries {
		b := 3 * (i + 1)
		if e.rel != uint32(2*b) || e.pos != uint32(b*size) {
			t.Errorf("entry %d = %+v, want {rel %d pos %d}", i, e, 2*b, b*size)
		}
	}
	for o := base.Offset(0); o < 40; o++ {
		got, err := l.Read(o, 1, nil)
		if err != nil || !bytes.Equal(got, batches[o/2]) {
			t.Fatalf("Read(%d) = %d bytes, %v", o, len(got), err)
		}
	}
}

func TestOffsetForTimestampAndMaxTimestamp(t *testing.T) {
	o := testOptions(t)
	o.IndexIntervalBytes = 0
	l := mustOpen(t, o)
	defer l.Close()
	stamps := []int64{100, 50, 200, 200, 150, 300, 250, 400}
	for i, ts := range stamps {
		if i == 4 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Append(makeBatch(l.End(), 2, 10, ts)); err != nil {
			t.Fatal(err)
		}
	}
	for target := int64(0); target <= 450; target += 10 {
		wantOK := false
		var want base.Offset
		var wantTs int64
		for i, ts := range stamps {
			if ts >= target {
				want, wantTs, wantOK = base.Offset(2*i), ts, true
				break
			}
		}
		got, gotTs, ok := l.OffsetForTimestamp(target, l.Start())
		if ok != wantOK || got != want || gotTs != wantTs {
			t.Errorf("OffsetForTimestamp(%d) = %d, %d, %v; want %d, %d, %v", target, got, gotTs, ok, want, wantTs, wantOK)
		}
	}
	if m, err := l.MaxTimestampFrom(l.Start()); err != nil || !m.Ok || m.Ts != 400 || m.Offset != 14 {
		t.Fatalf("MaxTimestampFrom(start) = %+v, %v", m, err)
	}
	segs := l.Segments()
	if segs[0].MaxTimestamp != 200 || segs[0].LargestTimeAt != 4 || !segs[0].HasTimestamp {
		t.Fatalf("segment 0 = %+v, want max 200 first at offset 4", segs[0])
	}
}

func TestTruncateTo(t *testing.T) {
	o := testOptions(t)
	o.IndexIntervalBytes = 0
	l := mustOpen(t, o)
	batches := appendN(t, l, 5, 2, 10, 0) // [0,10)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	batches = append(batches, appendN(t, l, 5, 2, 10, 100)...) // [10,20)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(7); !errors.Is(err, ErrNotBatchBoundary) {
		t.Fatalf("TruncateTo mid-batch: %v", err)
	}
	if err := l.TruncateTo(21); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("TruncateTo past end: %v", err)
	}
	if err := l.TruncateTo(6); err != nil {
		t.Fatal(err)
	}
	if l.End() != 6 || l.DurableEnd() != 6 || len(l.Segments()) != 1 || exists(segFile(o, 10, ".log")) {
		t.Fatalf("after truncate: End %d DurableEnd %d segments %+v", l.End(), l.DurableEnd(), l.Segments())
	}
	if m, _ := l.MaxTimestampFrom(0); m.Ts != 2 || m.Offset != 4 {
		t.Fatalf("MaxTimestampFrom after truncate = %+v", m)
	}
	more := appendN(t, l, 2, 2, 10, 7)
	want := append(concat(batches[:3]), concat(more)...)
	if !bytes.Equal(readAll(t, l), want) {
		t.Fatal("read after truncate+append differs")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if !bytes.Equal(readAll(t, l), want) {
		t.Fatal("read after reopen differs")
	}
	if err := l.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	if l.Start() != 0 || l.End() != 0 || len(readAll(t, l)) != 0 {
		t.Fatalf("TruncateTo(0): [%d, %d)", l.Start(), l.End())
	}
}

func TestDeleteSegmentsBefore(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	for range 4 {
		appendN(t, l, 2, 5, 10, 0)
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	// Segments [0,10) [10,20) [20,30) [30,40) and an empty active at 40.
	if err := l.DeleteSegmentsBefore(25); err != nil {
		t.Fatal(err)
	}
	if l.Start() != 20 {
		t.Fatalf("Start = %d, want 20", l.Start())
	}
	for _, b := range []base.Offset{0, 10} {
		for _, suf := range []string{".log", ".index", ".timeindex", ".log.deleted"} {
			if exists(segFile(o, b, suf)) {
				t.Errorf("%d%s still exists", b, suf)
			}
		}
	}
	if err := l.DeleteSegmentsBefore(1000); err != nil {
		t.Fatal(err)
	}
	if segs := l.Segments(); len(segs) != 1 || !segs[0].Active || l.Start() != 40 {
		t.Fatalf("the active segment must survive: %+v", segs)
	}
	appendN(t, l, 1, 1, 10, 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if l.Start() != 40 || l.End() != 41 {
		t.Fatalf("after reopen [%d, %d)", l.Start(), l.End())
	}
}

func TestReopenAfterCloseKeepsEverything(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 4096
	l := mustOpen(t, o)
	batches := appendN(t, l, 40, 3, 100, 10)
	before := l.Segments()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists(o.Dir + "/" + cleanShutdownName) {
		t.Fatal("no clean-shutdown marker after Close")
	}
	if err := l.Append(makeBatch(120, 1, 1, 0)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if exists(o.Dir + "/" + cleanShutdownName) {
		t.Fatal("marker still present while open")
	}
	after := l.Segments()
	if len(after) != len(before) {
		t.Fatalf("%d segments after reopen, want %d", len(after), len(before))
	}
	for i := range before {
		b, a := before[i], after[i]
		if a.BaseOffset != b.BaseOffset || a.NextOffset != b.NextOffset || a.SizeBytes != b.SizeBytes ||
			a.MaxTimestamp != b.MaxTimestamp || a.LargestTimeAt != b.LargestTimeAt {
			t.Errorf("segment %d: before %+v after %+v", i, b, a)
		}
	}
	if !bytes.Equal(readAll(t, l), concat(batches)) || l.DurableEnd() != l.End() {
		t.Fatal("data differs after reopen")
	}
	appendN(t, l, 1, 1, 10, 0)
	if l.End() != 121 {
		t.Fatalf("End %d", l.End())
	}
}

func TestOptionsValidate(t *testing.T) {
	good := DefaultOptions("/tmp/x", clock.Real{})
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Options){
		"dir":      func(o *Options) { o.Dir = "" },
		"segment":  func(o *Options) { o.SegmentBytes = record.HeaderSize - 1 },
		"huge":     func(o *Options) { o.SegmentBytes = 1 << 32 },
		"age":      func(o *Options) { o.SegmentMaxAge = -1 },
		"interval": func(o *Options) { o.IndexIntervalBytes = -1 },
		"index":    func(o *Options) { o.SegmentIndexBytes = 4 },
		"clock":    func(o *Options) { o.Clock = nil },
	} {
		o := good
		mut(&o)
		if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSetOptionsAppliesFromNextAppend(t *testing.T) {
	o := testOptions(t)
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 3, 1, 100, 0)
	o2 := o
	o2.SegmentBytes = record.HeaderSize
	if err := l.SetOptions(o2); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 2, 1, 100, 0)
	if n := len(l.Segments()); n != 3 {
		t.Fatalf("%d segments, want a roll before each append", n)
	}
	o2.Dir = t.TempDir()
	if err := l.SetOptions(o2); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("changing Dir: %v", err)
	}
}
