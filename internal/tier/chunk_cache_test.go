package tier

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// cachedRig is a rig whose segments are copied, and a Reader over the
// same store reading through a chunk cache in a temp dir; logGets counts
// the GETs of .log objects from then on.
type cachedRig struct {
	*rig
	segs    []remotemeta.RemoteSegment
	cache   *ChunkCache
	reader  *Reader
	direct  *Reader // no cache: the reference
	dir     string
	logGets atomic.Int64
	getWait atomic.Int64 // nanoseconds of latency added to each .log GET
}

func newCachedRig(t *testing.T, opts ChunkCacheOptions) *cachedRig {
	t.Helper()
	c := &cachedRig{rig: newRig(t, objstore.NewMem())}
	c.segs = c.copyAll(newTestLog(t, 300, 48<<10))
	c.setInject(func(op objstore.Op, key string) error {
		if op == objstore.OpGet && strings.HasSuffix(key, ".log") {
			c.logGets.Add(1)
			time.Sleep(time.Duration(c.getWait.Load()))
		}
		return nil
	})
	c.dir = filepath.Join(t.TempDir(), "cache")
	opts.Dir = c.dir
	cache, err := NewChunkCache(opts)
	if err != nil {
		t.Fatal(err)
	}
	c.cache = cache
	c.reader = &Reader{Store: c.rig.reader.Store, IndexCacheBytes: 1 << 20, Chunks: cache}
	t.Cleanup(c.reader.Close)
	c.direct = &Reader{Store: c.inner, IndexCacheBytes: 1 << 20}
	return c
}

// readAll reads every segment from its start in reads of maxBytes, as a
// consumer does, and checks each read against the direct reader.
func (c *cachedRig) readAll(maxBytes int) {
	c.t.Helper()
	for _, s := range c.segs {
		c.readSegment(s, maxBytes)
	}
}

// readSegment reads s from its start in reads of maxBytes through the
// cache and checks each read against the direct reader.
func (c *cachedRig) readSegment(s remotemeta.RemoteSegment, maxBytes int) {
	c.t.Helper()
	for o := s.Range.Start; o < s.Range.End; {
		got, err := c.reader.Read(c.t.Context(), s, o, maxBytes)
		if err != nil {
			c.t.Fatalf("Read(%d) through the cache: %v", o, err)
		}
		want, err := c.direct.Read(c.t.Context(), s, o, maxBytes)
		if err != nil {
			c.t.Fatalf("direct Read(%d): %v", o, err)
		}
		if !bytes.Equal(got, want) {
			c.t.Fatalf("Read(%d): %d bytes through the cache differ from the %d read directly", o, len(got), len(want))
		}
		o = lastNext(c.t, got)
	}
}

// lastNext is the offset after the last batch of b.
func lastNext(t *testing.T, b []byte) (next base.Offset) {
	t.Helper()
	for it := record.SplitBatches(b); ; {
		_, h, ok := it.Next()
		if !ok {
			return next
		}
		next = h.NextOffset()
	}
}

// cachedBytes is the bytes of the chunks in the cache, and the size of
// its slot file on disk.
func (c *cachedRig) cachedBytes() (entries, fileBytes int64) {
	c.t.Helper()
	c.cache.mu.Lock()
	for _, el := range c.cache.mu.byKey {
		entries += el.Value.(*chunkEntry).sizeBytes
	}
	c.cache.mu.Unlock()
	fi, err := os.Stat(filepath.Join(c.dir, slotFileName))
	if err != nil {
		c.t.Fatal(err)
	}
	return entries, fi.Size()
}

// slotOf is the slot of chunk k of the object of id, which must be cached.
func (c *cachedRig) slotOf(id remotemeta.SegmentID, k int64) int {
	c.t.Helper()
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	el, ok := c.cache.mu.byKey[chunkKey{id: id, index: k}]
	if !ok {
		c.t.Fatalf("chunk %d of %v is not cached", k, id)
	}
	return el.Value.(*chunkEntry).slot
}

// A second pass over the same data is served from the chunk files, with
// no GET of any .log, and every byte equals a direct read.
func TestChunkCacheHitsAfterMisses(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 4096})
	c.readAll(700)
	first := c.logGets.Load()
	if first == 0 {
		t.Fatal("no GET of a .log on a cold cache")
	}
	c.readAll(700)
	if n := c.logGets.Load() - first; n != 0 {
		t.Fatalf("%d .log GETs on a warm cache, want 0", n)
	}
	var logBytes int64
	for _, s := range c.segs {
		logBytes += s.SizeBytes
	}
	if total, _ := c.cachedBytes(); total != logBytes {
		t.Fatalf("the cache holds %d bytes, the .log objects %d", total, logBytes)
	}
}

// The cache never holds more than MaxBytes of chunks, in its accounting
// or on disk, and evicts the least recently used.
func TestChunkCacheStaysWithinBound(t *testing.T) {
	const chunk, bound = 4096, 5 * 4096
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: bound, ChunkBytes: chunk})
	for _, s := range c.segs {
		for o := s.Range.Start; o < s.Range.End; o += 3 {
			if _, err := c.reader.Read(t.Context(), s, o, 500); err != nil {
				t.Fatal(err)
			}
			if used, file := c.cachedBytes(); used > bound || file > bound {
				t.Fatalf("cache holds %d bytes in a file of %d, bound %d", used, file, bound)
			}
		}
	}
	// The first chunk of the first segment was evicted long ago.
	gets := c.logGets.Load()
	if _, err := c.reader.Read(t.Context(), c.segs[0], c.segs[0].Range.Start, 100); err != nil {
		t.Fatal(err)
	}
	if c.logGets.Load() == gets {
		t.Fatal("the least recently used chunk was still cached")
	}
}

// Concurrent misses of one chunk do one GET.
func TestChunkCacheConcurrentMissesShareOneGet(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 64 << 10})
	seg := c.segs[0]
	// Warm the offset index, so that only .log GETs remain.
	if _, err := c.reader.offsetIndex(t.Context(), seg); err != nil {
		t.Fatal(err)
	}
	c.getWait.Store(int64(50 * time.Millisecond))
	want, err := c.direct.Read(t.Context(), seg, seg.Range.Start+5, 2000)
	if err != nil {
		t.Fatal(err)
	}
	before := c.logGets.Load()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := c.reader.Read(t.Context(), seg, seg.Range.Start+5, 2000)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("concurrent Read: %v (equal %v)", err, bytes.Equal(got, want))
			}
		})
	}
	wg.Wait()
	if n := c.logGets.Load() - before; n != 1 {
		t.Fatalf("%d GETs for 8 concurrent misses of one chunk, want 1", n)
	}
}

// Sequential reads fetch the next ReadAheadChunks chunks in the
// background: reading on into them needs no GET.
func TestChunkCacheReadAhead(t *testing.T) {
	const chunk = 4096
	c, seg := newReadAheadRig(t, chunk, 4)
	if _, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 100); err != nil {
		t.Fatal(err)
	}
	waitCached(t, c.cache, seg.ID, 1, 2)
	if c.cached(seg.ID, 3) {
		t.Fatal("chunk 3 fetched: read-ahead went further than 2 chunks")
	}
	gets := c.logGets.Load()
	// Read everything in chunks 1 and 2.
	b := make([]byte, 2*chunk)
	if _, err := c.cache.readAt(t.Context(), c.reader.logObject(seg), chunk, b); err != nil {
		t.Fatal(err)
	}
	if n := c.logGets.Load() - gets; n != 0 {
		t.Fatalf("%d GETs reading chunks fetched ahead, want 0", n)
	}
	// A read that jumps into the middle of a segment does not read ahead:
	// only the chunks it reads are fetched.
	jump := c.segs[1]
	gets = c.logGets.Load()
	if _, err := c.reader.Read(t.Context(), jump, jump.Range.Start+(jump.Range.End-jump.Range.Start)/2, 100); err != nil {
		t.Fatal(err)
	}
	c.reader.Close() // waits for any read-ahead
	c.cache.mu.Lock()
	n := 0
	for k := range c.cache.mu.byKey {
		if k.id == jump.ID {
			n++
		}
	}
	c.cache.mu.Unlock()
	if fetched := c.logGets.Load() - gets; n > 2 || int64(n) != fetched {
		t.Fatalf("%d chunks of the segment read at a jump are cached after %d GETs, want only the one or two read", n, fetched)
	}
}

func (c *cachedRig) cached(id remotemeta.SegmentID, k int64) bool {
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	_, ok := c.cache.mu.byKey[chunkKey{id: id, index: k}]
	return ok
}

// newReadAheadRig is a cached rig of chunkBytes chunks reading two ahead,
// and its first segment, which must span at least chunks chunks.
func newReadAheadRig(t *testing.T, chunkBytes, chunks int64) (*cachedRig, remotemeta.RemoteSegment) {
	t.Helper()
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: chunkBytes, ReadAheadChunks: 2})
	seg := c.segs[0]
	if seg.SizeBytes < chunks*chunkBytes {
		t.Fatalf("segment of %d bytes: too small for this test", seg.SizeBytes)
	}
	return c, seg
}

func waitCached(t *testing.T, c *ChunkCache, id remotemeta.SegmentID, chunks ...int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		missing := -1
		c.mu.Lock()
		for _, k := range chunks {
			if _, ok := c.mu.byKey[chunkKey{id: id, index: k}]; !ok {
				missing = int(k)
				break
			}
		}
		c.mu.Unlock()
		if missing < 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("chunk %d was not read ahead", missing)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A damaged chunk is caught by the batch checks, dropped, and the bytes
// are read again from the bucket: the read succeeds.
func TestChunkCacheDamagedChunkIsReadAgain(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 1 << 20})
	seg := c.segs[0]
	want, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 4000)
	if err != nil {
		t.Fatal(err)
	}
	at := c.cache.slotStart(c.slotOf(seg.ID, 0)) + 100
	b := make([]byte, 1)
	if _, err := c.cache.file.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := c.cache.file.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	gets := c.logGets.Load()
	got, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 4000)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Read after damaging the chunk: %v (equal %v)", err, bytes.Equal(got, want))
	}
	if c.logGets.Load() == gets {
		t.Fatal("the damaged chunk was not read again from the bucket")
	}
	// A cache file cut short is a miss as well.
	if err := c.cache.file.Truncate(10); err != nil {
		t.Fatal(err)
	}
	got, err = c.reader.Read(t.Context(), seg, seg.Range.Start, 4000)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Read after truncating the cache file: %v (equal %v)", err, bytes.Equal(got, want))
	}
}

// What a crashed process left in the cache directory (the slot file, and
// the chunk files of earlier versions) is emptied or removed at start and
// never served; other files are kept.
func TestChunkCacheClearsLeftoversAtStart(t *testing.T) {
	dir := t.TempDir()
	leftovers := map[string]bool{
		"aa00000000000000000000000000000001-0-7.chunk":     false,
		"aa00000000000000000000000000000001-1-8.chunk.tmp": false,
		"notes.txt":  true,
		slotFileName: true,
	}
	for name := range leftovers {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewChunkCache(ChunkCacheOptions{Dir: dir, MaxBytes: 1 << 20, ChunkBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, kept := range leftovers {
		_, err := os.Stat(filepath.Join(dir, name))
		if exists := err == nil; exists != kept {
			t.Errorf("%s: exists %v after start, want %v", name, exists, kept)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, slotFileName)); err != nil || fi.Size() != 0 {
		t.Errorf("the slot file after start: %v, %v; want it empty", fi, err)
	}
}

// Bytes GET from the bucket count against the fetch quota; cache hits do
// not.
func TestChunkCacheFetchQuota(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 4096})
	seg := c.segs[0]
	c.reader.FetchQuota = NewByteRate(1000, testClock)
	if c.reader.FetchThrottled() {
		t.Fatal("throttled before any read")
	}
	if _, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 3000); err != nil {
		t.Fatal(err)
	}
	if !c.reader.FetchThrottled() {
		t.Fatal("not throttled after GETs of more than a second's quota")
	}
	c.reader.FetchQuota = NewByteRate(1000, testClock)
	if _, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 3000); err != nil {
		t.Fatal(err)
	}
	if c.reader.FetchThrottled() {
		t.Fatal("a read served from the cache counted against the quota")
	}
}

// A read near the end of a segment, told the next segment, fetches the
// next segment's offset index and first chunks in the background.
func TestChunkCacheReadAheadIntoNextSegment(t *testing.T) {
	const chunk = 4096
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: chunk, ReadAheadChunks: 2})
	seg, next := c.segs[0], c.segs[1]
	c.reader.ReadAheadFollowing(seg, []remotemeta.RemoteSegment{next}) // nothing read of seg yet: no read-ahead
	// The last batches of seg: the read ends in its last chunk.
	last := seg.Range.End - 1
	if _, err := c.reader.Read(t.Context(), seg, last, 100); err != nil {
		t.Fatal(err)
	}
	c.reader.ReadAheadFollowing(seg, []remotemeta.RemoteSegment{next})
	waitCached(t, c.cache, next.ID, 0, 1)
	gets := c.logGets.Load()
	hit, err := c.cache.readAt(t.Context(), c.reader.logObject(next), 0, make([]byte, 2*chunk))
	if err != nil || !hit {
		t.Fatalf("reading the first chunks of the next segment: hit %v, %v", hit, err)
	}
	if n := c.logGets.Load() - gets; n != 0 {
		t.Fatalf("%d .log GETs reading the start of the next segment, want 0", n)
	}
	c.reader.mu.Lock()
	_, indexCached := c.reader.mu.cache.get(indexCacheKey{id: next.ID, suffix: SuffixIndex})
	c.reader.mu.Unlock()
	if !indexCached {
		t.Fatal("the next segment's offset index was not fetched ahead")
	}
}

// Segments smaller than a chunk: the read-ahead depth reaches over several
// of them, each fetched with its offset index; ReadAheadObjects says as
// many are worth naming (none without a chunk cache).
func TestChunkCacheReadAheadSpansSmallSegments(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 1 << 20, ReadAheadChunks: 2})
	if len(c.segs) < 4 {
		t.Fatalf("%d segments, want at least 4", len(c.segs))
	}
	if got, direct := c.reader.ReadAheadObjects(), c.direct.ReadAheadObjects(); got != 2 || direct != 0 {
		t.Fatalf("ReadAheadObjects = %d with a depth of two chunks and %d without a chunk cache, want 2 and 0", got, direct)
	}
	seg := c.segs[0]
	if _, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 100); err != nil {
		t.Fatal(err)
	}
	c.reader.ReadAheadFollowing(seg, c.segs[1:])
	waitCached(t, c.cache, c.segs[1].ID, 0)
	waitCached(t, c.cache, c.segs[2].ID, 0)
	c.cache.Close() // waits for the read-ahead
	if _, ok := c.cache.mu.byKey[chunkKey{id: c.segs[3].ID}]; ok {
		t.Fatal("read ahead three segments with a depth of two chunks")
	}
	c.reader.mu.Lock()
	defer c.reader.mu.Unlock()
	for _, s := range c.segs[1:3] {
		if _, ok := c.reader.mu.cache.get(indexCacheKey{id: s.ID, suffix: SuffixIndex}); !ok {
			t.Fatalf("the offset index of segment %v was not fetched ahead", s.ID)
		}
	}
}

// A second pass over the same segments (another consumer, or the same one
// after the chunks were evicted) reads ahead again: read-ahead across
// segments used to happen once per segment for the life of the broker.
func TestChunkCacheReadAheadOnEveryPass(t *testing.T) {
	c := newCachedRig(t, ChunkCacheOptions{MaxBytes: 1 << 30, ChunkBytes: 1 << 20, ReadAheadChunks: 1})
	seg, next := c.segs[0], c.segs[1]
	for pass := range 3 {
		if _, err := c.reader.Read(t.Context(), seg, seg.Range.Start, 100); err != nil {
			t.Fatal(err)
		}
		c.reader.ReadAheadFollowing(seg, []remotemeta.RemoteSegment{next})
		waitCached(t, c.cache, next.ID, 0)
		t.Logf("pass %d read ahead", pass)
		c.cache.dropObject(next.ID)
	}
}

// A consumer reading the tier from its start, as a fetch does (a region
// from a cached chunk, else Read), GETs every chunk once when the cache
// holds two chunks or more, whatever the read-ahead depth: read-ahead
// deeper than the cache once evicted the chunk being read, and every chunk
// was fetched again (and a read that outlasted remote.fetch.max.wait.ms
// found its chunk gone at the next fetch, for ever).
func TestChunkCacheSequentialReaderFetchesEachChunkOnce(t *testing.T) {
	const chunkBytes = 16 << 10
	for _, slots := range []int64{2, 3, 8} {
		for _, depth := range []int{0, 1, 2, 4} {
			c := newCachedRig(t, ChunkCacheOptions{MaxBytes: slots * chunkBytes, ChunkBytes: chunkBytes, ReadAheadChunks: depth})
			c.getWait.Store(int64(time.Millisecond)) // read-ahead still in flight when the reader gets there
			chunks := int64(0)
			for _, s := range c.segs {
				chunks += chunkCount(s.SizeBytes, chunkBytes)
				for o := s.Range.Start; o < s.Range.End; {
					o = c.fetchLike(s, o, 5000)
				}
			}
			c.cache.Close() // waits for the read-ahead
			if gets := c.logGets.Load(); gets != chunks {
				t.Errorf("%d slots, read-ahead %d: %d GETs for %d chunks", slots, depth, gets, chunks)
			}
		}
	}
}

// fetchLike reads s from o as the broker's fetch does (a region when the
// cache can serve one, else Read), checks the bytes against the direct
// reader, and returns the offset after them.
func (c *cachedRig) fetchLike(s remotemeta.RemoteSegment, o base.Offset, maxBytes int) base.Offset {
	c.t.Helper()
	want, err := c.direct.Read(c.t.Context(), s, o, maxBytes)
	if err != nil {
		c.t.Fatal(err)
	}
	reg, ok, err := c.reader.ReadRegion(c.t.Context(), s, o, maxBytes)
	if err != nil {
		c.t.Fatalf("ReadRegion(%d): %v", o, err)
	}
	var got []byte
	if ok {
		got = regionBytes(c.t, reg)
		reg.Release()
	} else if got, err = c.reader.Read(c.t.Context(), s, o, maxBytes); err != nil {
		c.t.Fatalf("Read(%d): %v", o, err)
	}
	if len(got) == 0 || !bytes.HasPrefix(want, got) {
		c.t.Fatalf("read at %d: %d bytes, not a prefix of the %d read directly", o, len(got), len(want))
	}
	return lastNext(c.t, got)
}
