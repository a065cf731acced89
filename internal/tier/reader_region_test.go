package tier

import (
	"bytes"
	"errors"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// regionBytes reads what a region holds, and closes its file.
func regionBytes(t *testing.T, reg Region) []byte {
	t.Helper()
	defer reg.File.Close()
	b := make([]byte, reg.Size)
	if _, err := reg.File.ReadAt(b, reg.Pos); err != nil {
		t.Fatalf("reading a region of %d bytes at %d: %v", reg.Size, reg.Pos, err)
	}
	return b
}

// From every offset, a region holds whole batches from the one holding
// that offset, byte for byte what Read returns there (a prefix of it: a
// region stops at its chunk's end), within maxBytes unless the first batch
// alone is larger. Chunks are small here, so batches cross their edges
// and some reads fall back to Read; most must not.
func TestReadRegionMatchesRead(t *testing.T) {
	for _, tc := range []struct {
		chunkBytes int64
		maxBytes   int
	}{{16 << 10, 5000}, {16 << 10, 1 << 20}, {1 << 20, 3000}, {1 << 20, 1}} {
		c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: tc.chunkBytes, ReadAheadChunks: 1})
		regions, reads := 0, 0
		for _, s := range c.segs {
			for o := s.Range.Start; o < s.Range.End; o++ {
				reads++
				want, err := c.direct.Read(t.Context(), s, o, tc.maxBytes)
				if err != nil {
					t.Fatal(err)
				}
				reg, ok, err := c.reader.ReadRegion(t.Context(), s, o, tc.maxBytes)
				if err != nil {
					t.Fatalf("ReadRegion(%d): %v", o, err)
				}
				if !ok {
					continue
				}
				regions++
				got := regionBytes(t, reg)
				if next := lastNext(t, got); reg.Next != next {
					t.Fatalf("region at %d: Next %d, but its batches end at %d", o, reg.Next, next)
				}
				if !bytes.HasPrefix(want, got) || len(got) == 0 {
					t.Fatalf("chunk %d, max %d: region at %d (%d bytes) is not a prefix of the %d bytes Read returns",
						tc.chunkBytes, tc.maxBytes, o, len(got), len(want))
				}
				if next := lastNext(t, got); len(got) > tc.maxBytes && next != lastNext(t, want[:firstBatchSize(t, want)]) {
					t.Fatalf("region at %d: %d bytes past maxBytes %d, more than its first batch", o, len(got), tc.maxBytes)
				}
			}
		}
		if regions*2 < reads {
			t.Fatalf("chunk %d, max %d: %d of %d reads served as regions, want most", tc.chunkBytes, tc.maxBytes, regions, reads)
		}
	}
}

func firstBatchSize(t *testing.T, b []byte) int {
	t.Helper()
	h, err := record.ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	return h.Size()
}

// Bytes that fail their checks when a chunk comes from the bucket are never
// sent from its file: no region, and Read reports the corrupt object.
func TestReadRegionRefusesCorruptChunk(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 1 << 20})
	seg := c.segs[0]
	key := SegmentKey(seg, SuffixLog)
	b := getObject(t, c.inner, key)
	b[len(b)-10] ^= 0x40 // in the last batch
	putObject(t, c.inner, key, b)
	for o := seg.Range.Start; o < seg.Range.End; o++ {
		reg, ok, err := c.reader.ReadRegion(t.Context(), seg, o, 1<<20)
		if ok {
			reg.File.Close()
			t.Fatalf("offset %d of a corrupt chunk served as a region", o)
		}
		if err != nil {
			t.Fatalf("ReadRegion(%d): %v", o, err)
		}
	}
	if _, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 1<<20); !errors.Is(err, ErrCorruptObject) {
		t.Fatalf("Read of the corrupt chunk: %v, want ErrCorruptObject", err)
	}
}

// Without a chunk cache there are no regions: every read goes through Read.
func TestReadRegionNeedsChunkCache(t *testing.T) {
	r := newRig(t, objstore.NewMem())
	seg := r.copyAll(newTestLog(t, 40, 32<<10))[0]
	if _, ok, err := r.reader.ReadRegion(t.Context(), seg, seg.Range.Start, 1<<20); ok || err != nil {
		t.Fatalf("ReadRegion without a chunk cache: ok %v, err %v", ok, err)
	}
}

func TestCheckChunkBatches(t *testing.T) {
	var obj []byte
	for i := range 4 {
		obj = append(obj, makeBatch(base.Offset(100+3*i), 3, 50, batchTs(i))...)
	}
	size := firstBatchSize(t, obj)
	seg := remotemeta.RemoteSegment{Range: base.Range{Start: 100, End: 112}}
	flipped := bytes.Clone(obj)
	flipped[2*size+70] ^= 1
	cases := []struct {
		name     string
		chunk    []byte
		first    int64
		firstRel uint32
		want     chunkBatches
	}{
		{"whole object", obj, 0, 0, chunkBatches{{0, 0}, {uint32(size), 3}, {uint32(2 * size), 6}, {uint32(3 * size), 9}, {uint32(4 * size), 12}}},
		{"cut in the third batch", obj[:2*size+10], 0, 0, chunkBatches{{0, 0}, {uint32(size), 3}, {uint32(2 * size), 6}}},
		{"from the second batch", obj, int64(size), 3, chunkBatches{{uint32(size), 3}, {uint32(2 * size), 6}, {uint32(3 * size), 9}, {uint32(4 * size), 12}}},
		{"wrong offset at the start", obj, int64(size), 4, nil},
		{"CRC mismatch", flipped, 0, 0, nil},
		{"no whole batch", obj[:size-1], 0, 0, nil},
		{"start past the chunk", obj[:size], int64(size), 3, nil},
	}
	for _, tc := range cases {
		got := checkChunkBatches(tc.chunk, tc.first, tc.firstRel, seg)
		if !equalTables(got, tc.want) {
			t.Errorf("%s: table %v, want %v", tc.name, got, tc.want)
		}
	}
	// A batch that runs past the segment's end is not the segment's: the
	// chunk gets no table, and is read (and refused) through Read.
	short := remotemeta.RemoteSegment{Range: base.Range{Start: 100, End: 110}}
	if got := checkChunkBatches(obj, 0, 0, short); got != nil {
		t.Errorf("a batch past the segment's end %v: table %v, want none", short.Range, got)
	}
}

func equalTables(a, b chunkBatches) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestChunkBatchesSpan(t *testing.T) {
	// Batches of 100 bytes at 0, 100, 200 holding [10, 15), [15, 20), [20, 30).
	table := chunkBatches{{0, 10}, {100, 15}, {200, 20}, {300, 30}}
	cases := []struct {
		rel        uint32
		maxBytes   int
		first, end chunkBatch
		wantFound  bool
	}{
		{10, 1000, table[0], table[3], true},
		{12, 1000, table[0], table[3], true},
		{15, 150, table[1], table[2], true},
		{15, 200, table[1], table[3], true},
		{29, 1, table[2], table[3], true}, // KIP-74: at least the first batch
		{9, 1000, chunkBatch{}, chunkBatch{}, false},
		{30, 1000, chunkBatch{}, chunkBatch{}, false},
	}
	for _, tc := range cases {
		first, end, found := table.span(tc.rel, tc.maxBytes)
		if found != tc.wantFound || first != tc.first || end != tc.end {
			t.Errorf("span(%d, %d) = %v, %v, %v; want %v, %v, %v", tc.rel, tc.maxBytes, first, end, found, tc.first, tc.end, tc.wantFound)
		}
	}
	if _, _, found := (chunkBatches{}).span(0, 10); found {
		t.Error("an empty table spans something")
	}
}

func TestFirstBatchIn(t *testing.T) {
	idx := []offsetEntry{{rel: 5, pos: 4100}, {rel: 9, pos: 8300}}
	cases := []struct {
		start, end int64
		pos        int64
		rel        uint32
		ok         bool
	}{
		{0, 4096, 0, 0, true},
		{4096, 8192, 4100, 5, true},
		{4100, 8192, 4100, 5, true},
		{4101, 8192, 0, 0, false},
		{8192, 12288, 8300, 9, true},
		{12288, 16384, 0, 0, false},
	}
	for _, tc := range cases {
		pos, rel, ok := firstBatchIn(idx, tc.start, tc.end)
		if pos != tc.pos || rel != tc.rel || ok != tc.ok {
			t.Errorf("firstBatchIn(%d, %d) = %d, %d, %v; want %d, %d, %v", tc.start, tc.end, pos, rel, ok, tc.pos, tc.rel, tc.ok)
		}
	}
}

// Only COPY_FINISHED segments serve regions, as only they serve Read: a
// segment being deleted (or an attempt that never finished) may have
// objects in the bucket, but they are not the log's to serve.
func TestReadRegionRefusesUnfinishedSegment(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 16 << 10})
	for _, st := range []remotemeta.State{remotemeta.CopyStarted, remotemeta.DeleteStarted, remotemeta.DeleteFinished, remotemeta.Dangling} {
		seg := c.segs[0]
		seg.State = st
		reg, ok, err := c.reader.ReadRegion(t.Context(), seg, seg.Range.Start, 1<<20)
		if ok || err != nil {
			if ok {
				reg.File.Close()
				reg.Release()
			}
			t.Errorf("ReadRegion of a %v segment: ok %v, err %v", st, ok, err)
		}
	}
}

// Regions count as reads for the read-ahead, at their place in the
// object: a consumer served regions from chunk 0 and then from chunk 1
// gets chunks 2 and 3 fetched ahead, as one served by Read does. Each
// region is noted as a read ending in its own chunk.
func TestReadRegionReadsAhead(t *testing.T) {
	const chunk = 4096
	c, seg := newReadAheadRig(t, chunk, 5)
	region := func(inChunk int64) {
		t.Helper()
		idx, err := c.reader.offsetIndex(t.Context(), seg)
		if err != nil {
			t.Fatal(err)
		}
		for o := seg.Range.Start; o < seg.Range.End; o++ {
			if pos, _ := lookupOffset(idx, uint32(o-seg.Range.Start), seg.SizeBytes); pos/chunk != inChunk {
				continue
			}
			reg, ok, err := c.reader.ReadRegion(t.Context(), seg, o, 100)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				regionBytes(t, reg)
				c.cache.mu.Lock()
				last := c.cache.mu.lastRead[seg.ID]
				c.cache.mu.Unlock()
				if last != inChunk {
					t.Fatalf("a region of chunk %d noted as a read ending in chunk %d", inChunk, last)
				}
				return
			}
		}
		t.Fatalf("no region served from chunk %d", inChunk)
	}
	region(0)
	waitCached(t, c.cache, seg.ID, 1, 2)
	if c.cached(seg.ID, 3) {
		t.Fatal("chunk 3 fetched after a read of chunk 0: read-ahead went further than 2 chunks")
	}
	region(1)
	waitCached(t, c.cache, seg.ID, 3)
	region(3)
}
