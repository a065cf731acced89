package tier

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Timestamp lookups through the remote time indexes find the first batch
// whose max timestamp reaches ts, as a scan of every batch does.
func TestOffsetForTimestampMatchesScan(t *testing.T) {
	l := newTestLog(t, 300, 32<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	var headers []record.Header
	for o := base.Offset(0); o < segs[len(segs)-1].Range.End; {
		b, _ := l.Read(o, 1<<30, nil)
		for it := record.SplitBatches(b); ; {
			_, h, ok := it.Next()
			if !ok {
				break
			}
			headers = append(headers, h)
			o = h.NextOffset()
		}
	}
	for ts := batchTs(0) - 5; ts <= batchTs(len(headers))+5; ts++ {
		var want *record.Header
		for i := range headers {
			if headers[i].MaxTimestamp >= ts {
				want = &headers[i]
				break
			}
		}
		var gotOff base.Offset
		var gotTs int64
		found := false
		for _, s := range segs {
			o, mts, ok, err := r.reader.OffsetForTimestamp(t.Context(), s, ts, s.Range.Start)
			if err != nil {
				t.Fatalf("OffsetForTimestamp(%d) in %v: %v", ts, s.Range, err)
			}
			if ok {
				gotOff, gotTs, found = o, mts, true
				break
			}
		}
		switch {
		case want == nil && found:
			t.Fatalf("ts %d: found %d, want none", ts, gotOff)
		case want != nil && (!found || gotOff != want.BaseOffset || gotTs != want.MaxTimestamp):
			t.Fatalf("ts %d: got (%d, %d, %v), want (%d, %d)", ts, gotOff, gotTs, found, want.BaseOffset, want.MaxTimestamp)
		}
	}
}

// A corrupt index or .log object is an error naming its key, never data.
func TestCorruptObjectsAreRefused(t *testing.T) {
	l := newTestLog(t, 60, 32<<10)
	cases := []struct {
		name   string
		suffix Suffix
		mutate func(b []byte) []byte
	}{
		{"index not whole entries", SuffixIndex, func(b []byte) []byte { return b[:len(b)-3] }},
		{"index out of order", SuffixIndex, func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[offsetEntryBytes:], 1)
			return b
		}},
		{"index past the object", SuffixIndex, func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[4:], 1<<30)
			return b
		}},
		{"index points inside a batch", SuffixIndex, func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[4:], binary.BigEndian.Uint32(b[4:])+3)
			return b
		}},
		{"timeindex not whole entries", SuffixTimeIndex, func(b []byte) []byte { return b[:len(b)-1] }},
		{"log bit flip", SuffixLog, func(b []byte) []byte {
			b[100] ^= 0x40
			return b
		}},
		{"log truncated", SuffixLog, func(b []byte) []byte { return b[:len(b)/2] }},
		{"log bad length", SuffixLog, func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[8:], 3)
			return b
		}},
		{"log last batch a byte longer than the object", SuffixLog, func(b []byte) []byte {
			last := 0
			for next := 0; next < len(b); next += record.LogOverhead + int(binary.BigEndian.Uint32(b[next+8:])) {
				last = next
			}
			binary.BigEndian.PutUint32(b[last+8:], binary.BigEndian.Uint32(b[last+8:])+1)
			return b
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, objstore.NewMem())
			seg := r.copyAll(l)[0]
			key := SegmentKey(seg, tc.suffix)
			putObject(t, r.inner, key, tc.mutate(getObject(t, r.inner, key)))
			blamed := key
			if tc.name == "index points inside a batch" {
				blamed = SegmentKey(seg, SuffixLog) // seen as a bad batch in the .log
			}
			var firstErr error
			for o := seg.Range.Start; o < seg.Range.End && firstErr == nil; o++ {
				_, firstErr = r.reader.Read(t.Context(), seg, o, 1<<20)
				if firstErr == nil && tc.suffix == SuffixTimeIndex {
					_, _, _, firstErr = r.reader.OffsetForTimestamp(t.Context(), seg, batchTs(int(o)), seg.Range.Start)
				}
			}
			if !errors.Is(firstErr, ErrCorruptObject) || !strings.Contains(firstErr.Error(), blamed) {
				t.Fatalf("error %v, want ErrCorruptObject naming %s", firstErr, blamed)
			}
		})
	}
}

// The index cache holds at most IndexCacheBytes of index objects, evicting
// the least recently used, and never keeps an index larger than itself.
func TestIndexCacheStaysWithinBound(t *testing.T) {
	l := newTestLog(t, 400, 16<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	const bound = 40 // a few entries of 8 bytes: some indexes fit, not all
	r.reader = &Reader{Store: r.reader.Store, IndexCacheBytes: bound}
	gets := 0
	r.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpGet && strings.HasSuffix(key, ".index") {
			gets++
		}
		return nil
	})
	for range 2 {
		for _, s := range segs {
			if _, err := r.reader.Read(t.Context(), s, s.Range.Start, 100); err != nil {
				t.Fatal(err)
			}
			r.reader.mu.Lock()
			used := r.reader.mu.cache.usedBytes
			r.reader.mu.Unlock()
			if used > bound {
				t.Fatalf("cache holds %d bytes, bound %d", used, bound)
			}
		}
	}
	if gets <= len(segs) {
		t.Fatalf("%d index GETs for %d segments read twice: nothing was evicted", gets, len(segs))
	}
	// A big cache fetches each index once.
	r.reader = &Reader{Store: r.reader.Store, IndexCacheBytes: 1 << 20}
	gets = 0
	for range 3 {
		for _, s := range segs {
			if _, err := r.reader.Read(t.Context(), s, s.Range.Start, 100); err != nil {
				t.Fatal(err)
			}
		}
	}
	if gets != len(segs) {
		t.Fatalf("%d index GETs for %d segments, want one each", gets, len(segs))
	}
}

func TestIndexCacheLRU(t *testing.T) {
	c := newIndexCache(100)
	k := func(n int) indexCacheKey { return indexCacheKey{id: sid(n), suffix: SuffixIndex} }
	c.put(k(1), 1, 40)
	c.put(k(2), 2, 40)
	c.get(k(1)) // 2 is now the least recently used
	c.put(k(3), 3, 40)
	if _, ok := c.get(k(2)); ok {
		t.Error("2 was not evicted")
	}
	if _, ok := c.get(k(1)); !ok {
		t.Error("1 was evicted")
	}
	c.put(k(4), 4, 101)
	if _, ok := c.get(k(4)); ok || c.usedBytes != 80 {
		t.Errorf("an entry over the bound was kept (used %d)", c.usedBytes)
	}
}

// Reads are refused for segments that are not COPY_FINISHED.
func TestReadRefusesUnfinishedSegment(t *testing.T) {
	r := newRig(t, objstore.NewMem())
	s := rseg(1, 0, 10, 100, remotemeta.CopyStarted)
	if _, err := r.reader.Read(t.Context(), s, 0, 100); !errors.Is(err, ErrNotReadable) {
		t.Fatalf("Read of COPY_STARTED: %v", err)
	}
	for _, st := range []remotemeta.State{remotemeta.CopyStarted, remotemeta.DeleteStarted, remotemeta.DeleteFinished, remotemeta.Dangling} {
		s := rseg(1, 0, 10, 100, st)
		if _, _, _, err := r.reader.OffsetForTimestamp(t.Context(), s, 0, 0); !errors.Is(err, ErrNotReadable) {
			t.Errorf("OffsetForTimestamp of %v: %v", st, err)
		}
	}
}

// A timestamp search from an offset inside a segment (the log start moved
// into it) finds the first record at or after that offset whose timestamp
// reaches ts, even when an earlier batch of the segment reached ts first.
func TestOffsetForTimestampFromInsideASegment(t *testing.T) {
	l := newTestLog(t, 300, 32<<10)
	r := newRig(t, objstore.NewMem())
	for _, s := range r.copyAll(l) {
		b, err := l.Read(s.Range.Start, 1<<30, nil)
		if err != nil {
			t.Fatal(err)
		}
		var headers []record.Header
		for it := record.SplitBatches(b); ; {
			_, h, ok := it.Next()
			if !ok || h.BaseOffset >= s.Range.End {
				break
			}
			headers = append(headers, h)
		}
		for from := s.Range.Start; from < s.Range.End; from += 5 {
			for i := 0; i < len(headers); i += 3 {
				ts := headers[i].MaxTimestamp
				var want *record.Header
				for j := range headers {
					if headers[j].NextOffset() > from && headers[j].MaxTimestamp >= ts {
						want = &headers[j]
						break
					}
				}
				o, gotTs, ok, err := r.reader.OffsetForTimestamp(t.Context(), s, ts, from)
				switch {
				case err != nil:
					t.Fatalf("OffsetForTimestamp(%d, from %d) in %v: %v", ts, from, s.Range, err)
				case want == nil && ok:
					t.Fatalf("OffsetForTimestamp(%d, from %d) in %v = %d, want none", ts, from, s.Range, o)
				case want != nil && (!ok || o != max(want.BaseOffset, from) || gotTs != want.MaxTimestamp):
					t.Fatalf("OffsetForTimestamp(%d, from %d) in %v = (%d, %d, %v), want (%d, %d)",
						ts, from, s.Range, o, gotTs, ok, max(want.BaseOffset, from), want.MaxTimestamp)
				}
			}
		}
	}
}

// A .log object whose batches have valid CRCs but offsets that the
// segment's metadata does not allow is corrupt: a read that reaches those
// batches is refused, never served (a gap or an overlap would skip or
// repeat offsets; a batch past Range.End serves offsets the segment does
// not hold).
func TestReadRefusesBatchesOutOfTheSegmentsOffsets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       base.Range
		batches [][2]int // base offset, records
	}{
		{"batch past the segment's end", rng(0, 3), [][2]int{{0, 1}, {1, 1}, {2, 2}}},
		{"gap between batches", rng(0, 4), [][2]int{{0, 1}, {2, 2}}},
		{"overlapping batches", rng(0, 3), [][2]int{{0, 2}, {1, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj []byte
			for _, b := range tc.batches {
				obj = append(obj, makeBatch(base.Offset(b[0]), b[1], 20, 10_000)...)
			}
			seg := rseg(1, tc.r.Start, tc.r.End, int64(len(obj)), remotemeta.CopyFinished)
			seg.TopicID = testTopicID
			r := newRig(t, objstore.NewMem())
			putLogOnly(t, r.inner, seg, obj)
			got, err := r.reader.Read(t.Context(), seg, tc.r.Start, 1<<20)
			if !errors.Is(err, ErrCorruptObject) {
				t.Fatalf("Read(%d) = %s, %v; want ErrCorruptObject", tc.r.Start, batchRanges(got), err)
			}
		})
	}
}

// TestSetIndexCacheBytesBindsTheReader: the remote index cache keeps an
// offset index between reads; a bound set after the cache exists evicts at
// once (the next read fetches the index again), and one set before it
// exists applies when it is made.
func TestSetIndexCacheBytesBindsTheReader(t *testing.T) {
	l := newTestLog(t, 40, 8<<10)
	r := newRig(t, objstore.NewMem())
	segs := r.copyAll(l)
	seg := segs[0]
	var indexGets atomic.Int32
	r.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpGet && key == SegmentKey(seg, SuffixIndex) {
			indexGets.Add(1)
		}
		return nil
	})
	read := func(rd *Reader) {
		t.Helper()
		if _, err := rd.Read(t.Context(), seg, seg.Range.Start, 1); err != nil {
			t.Fatal(err)
		}
	}
	read(r.reader)
	read(r.reader)
	if n := indexGets.Load(); n != 1 {
		t.Fatalf("%d index GETs for two reads with a cache, want 1", n)
	}
	r.reader.SetIndexCacheBytes(1) // below any index: holds none
	read(r.reader)
	if n := indexGets.Load(); n != 2 {
		t.Fatalf("%d index GETs after the cache was bound to one byte, want 2", n)
	}

	fresh := &Reader{Store: r.reader.Store, IndexCacheBytes: 1 << 20}
	fresh.SetIndexCacheBytes(1) // before its first read
	read(fresh)
	read(fresh)
	if n := indexGets.Load(); n != 4 {
		t.Fatalf("%d index GETs, want 4: a bound set before the cache exists applies to it", n)
	}
}

// TestReadRefusesABatchCutByTheIndex: an offset index entry moved back
// into the batch before it (a corrupt index) ends Read's one ranged GET
// inside that batch; a read of an offset there is refused as a corrupt
// .log, never served short.
func TestReadRefusesABatchCutByTheIndex(t *testing.T) {
	l := newTestLog(t, 60, 32<<10)
	r := newRig(t, objstore.NewMem())
	seg := r.copyAll(l)[0]
	key := SegmentKey(seg, SuffixIndex)
	idx := getObject(t, r.inner, key)
	rel, pos := binary.BigEndian.Uint32(idx), binary.BigEndian.Uint32(idx[4:])
	binary.BigEndian.PutUint32(idx[4:], pos-3)
	putObject(t, r.inner, key, idx)
	from := seg.Range.Start + base.Offset(rel) - 1
	if got, err := r.reader.Read(t.Context(), seg, from, 1); !errors.Is(err, ErrCorruptObject) || !strings.Contains(err.Error(), SegmentKey(seg, SuffixLog)) {
		t.Fatalf("Read(%d) = %d bytes, %v; want ErrCorruptObject naming the .log", from, len(got), err)
	}
}

// An index object holds at most one entry a batch, and a batch is at
// least a header long.
func TestMaxIndexBytes(t *testing.T) {
	h := int64(record.HeaderSize)
	for _, tc := range []struct{ segment, entry, want int64 }{
		{h - 1, 8, 0},
		{h, 8, 8},
		{2*h - 1, 12, 12},
		{2 * h, 12, 24},
		{3 * h, txnEntryBytes, 3 * txnEntryBytes},
	} {
		if got := maxIndexBytes(tc.segment, tc.entry); got != tc.want {
			t.Errorf("maxIndexBytes(%d, %d) = %d, want %d", tc.segment, tc.entry, got, tc.want)
		}
	}
}

// TestIndexOfMoreEntriesThanBatchesIsRefused: a segment of 183 bytes
// holds at most three batches, so at most three aborted transactions; a
// transaction index of three valid entries is read, one of four (each
// valid on its own) is refused as corrupt without being read, and so is
// one of three for a segment a byte shorter.
func TestIndexOfMoreEntriesThanBatchesIsRefused(t *testing.T) {
	for _, tc := range []struct {
		size    int64
		entries int
		ok      bool
	}{
		{3 * record.HeaderSize, 3, true},
		{3 * record.HeaderSize, 4, false},
		{3*record.HeaderSize - 1, 3, false},
	} {
		seg := rseg(1, 0, 6, tc.size, remotemeta.CopyFinished)
		seg.TopicID = testTopicID
		var ts []AbortedTxn
		for i := range tc.entries {
			o := base.Offset(i + 1)
			ts = append(ts, AbortedTxn{ProducerID: 7, FirstOffset: o, LastOffset: o, LastStableOffset: o + 1})
		}
		r := newRig(t, objstore.NewMem())
		putObject(t, r.inner, SegmentKey(seg, SuffixTxnIndex), encodeTxnIndex(ts))
		got, err := r.reader.TxnIndex(t.Context(), seg)
		if tc.ok && (err != nil || len(got) != tc.entries) || !tc.ok && !errors.Is(err, ErrCorruptObject) {
			t.Errorf("%d entries for a segment of %d bytes: TxnIndex = %d entries, %v; want ok %v", tc.entries, tc.size, len(got), err, tc.ok)
		}
	}
}

// cutBodies is a store whose ranged GETs end their bodies early, as a
// connection cut mid-transfer does, while the objects stay whole.
type cutBodies struct{ objstore.Store }

func (c cutBodies) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	rc, err := c.Store.GetRange(ctx, key, off, n)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, n/2), rc}, nil
}

// TestReadOfACutBodyIsNotCorruption: a ranged GET whose body ends early
// while the object is as long as its metadata says (a cut connection) is
// a read error, not a corrupt object, up to the object's last byte; an
// object shorter than its metadata is corrupt.
func TestReadOfACutBodyIsNotCorruption(t *testing.T) {
	l := newTestLog(t, 60, 32<<10)
	r := newRig(t, objstore.NewMem())
	seg := r.copyAll(l)[0]
	cut := &Reader{Store: cutBodies{r.inner}, IndexCacheBytes: 1 << 20}
	last := seg.Range.End - 1
	for _, from := range []base.Offset{seg.Range.Start, last} {
		_, err := cut.Read(t.Context(), seg, from, 1<<20)
		if err == nil || errors.Is(err, ErrCorruptObject) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Read(%d) of a cut body = %v, want a read error that is not ErrCorruptObject", from, err)
		}
	}
	key := SegmentKey(seg, SuffixLog)
	b := getObject(t, r.inner, key)
	putObject(t, r.inner, key, b[:len(b)-1])
	if _, err := cut.Read(t.Context(), seg, last, 1<<20); !errors.Is(err, ErrCorruptObject) {
		t.Errorf("Read(%d) of an object a byte short = %v, want ErrCorruptObject", last, err)
	}
}

// TestReadOfTinyBatchesStopsAtMaxBytes: batches of one empty record (68
// bytes, shorter than a header and a record's overhead) or of none (a
// header alone, as the cleaner leaves) still end a read at maxBytes, past
// the first batch.
func TestReadOfTinyBatchesStopsAtMaxBytes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offsets int // per batch
		batch   func(base.Offset) []byte
	}{
		{"one empty record", 1, func(o base.Offset) []byte { return makeBatch(o, 1, 0, 10_000) }},
		{"no record", 2, func(o base.Offset) []byte { return emptyBatch(o, 2, 10_000) }},
	} {
		var obj []byte
		for i := range 20 {
			obj = append(obj, tc.batch(base.Offset(i*tc.offsets))...)
		}
		size := len(obj) / 20
		seg := rseg(1, 0, base.Offset(20*tc.offsets), int64(len(obj)), remotemeta.CopyFinished)
		seg.TopicID = testTopicID
		r := newRig(t, objstore.NewMem())
		putLogOnly(t, r.inner, seg, obj)
		for _, read := range []struct{ maxBytes, want int }{
			{1, 1}, {size, 1}, {3*size - 1, 2}, {3 * size, 3}, {1 << 20, 20},
		} {
			got, err := r.reader.Read(t.Context(), seg, 0, read.maxBytes)
			if err != nil || len(got) != read.want*size {
				t.Errorf("%s: Read(0, %d) = %d bytes, %v; want %d batches of %d", tc.name, read.maxBytes, len(got), err, read.want, size)
			}
		}
	}
}
