package tier

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// ChunkCacheOptions configures a ChunkCache.
type ChunkCacheOptions struct {
	// Dir holds the slot file (strata.remote.cache.dir); it is created
	// when missing.
	Dir string
	// MaxBytes bounds the slot file (strata.remote.cache.size.bytes): it
	// holds MaxBytes / ChunkBytes chunks; positive.
	MaxBytes int64
	// ChunkBytes is the size of a chunk (strata.remote.chunk.bytes).
	ChunkBytes int64
	// ReadAheadChunks is how many chunks are fetched ahead of a sequential
	// reader (strata.remote.readahead.chunks); 0 turns read-ahead off.
	ReadAheadChunks int
	// Logger gets the failures that no reader sees (read-ahead, writing a
	// chunk); nil means slog.Default().
	Logger *slog.Logger
}

// Validate reports the first unusable option.
func (o ChunkCacheOptions) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("tier: ChunkCache needs a Dir")
	case o.MaxBytes <= 0:
		return fmt.Errorf("tier: ChunkCache.MaxBytes %d must be positive", o.MaxBytes)
	case o.ChunkBytes <= 0:
		return fmt.Errorf("tier: ChunkCache.ChunkBytes %d must be positive", o.ChunkBytes)
	case o.ReadAheadChunks < 0:
		return fmt.Errorf("tier: ChunkCache.ReadAheadChunks %d must not be negative", o.ReadAheadChunks)
	}
	return nil
}

// slotFileName is the cache's one file in Dir; see slotTable.
const slotFileName = "chunks.slots"

// Chunk files of earlier versions ("<segment id>-<chunk>-<n>.chunk", and
// ".chunk.tmp" while written): removed at start like the slot file.
const (
	oldChunkFileSuffix = ".chunk"
	oldChunkTempSuffix = ".chunk.tmp"
)

// readAheadParallel bounds the chunk GETs that read-ahead runs at once,
// for all readers of the broker; a read-ahead that finds no free slot is
// skipped (the reader fetches the chunk itself when it gets there).
const readAheadParallel = 8

// readAheadTimeout bounds one read-ahead GET.
const readAheadTimeout = 30 * time.Second

// trackedObjectsMax bounds the objects whose last read chunk is
// remembered for read-ahead; beyond it an arbitrary one is forgotten.
const trackedObjectsMax = 4096

// keptBufferBytes bounds the memory of the chunk buffers kept for reuse
// after remote reads.
const keptBufferBytes = 64 << 20

// keptChunkBuffers is how many chunk buffers are kept for reuse: as many
// as read-ahead runs GETs at once, within keptBufferBytes, and at least
// one (8 of the default 8 MiB chunks; 1 of 64 MiB or more).
func keptChunkBuffers(chunkBytes int64) int {
	return int(max(1, min(readAheadParallel, keptBufferBytes/chunkBytes)))
}

// chunkAttempts bounds how often one read looks a chunk up again after
// the file it found was evicted or the GET it waited for failed; then it
// reads its bytes from the bucket itself, bypassing the cache.
const chunkAttempts = 3

// ChunkCache is a bounded on-disk cache of the chunks of remote .log
// objects (DESIGN §4), an LRU by chunk. The chunks live in the slots of one
// file in Dir (see slotTable): a chunk's slot is written before the chunk
// enters the LRU, and a slot being read or sent is pinned, so a reader
// sees a whole chunk, never one being overwritten. Concurrent misses of
// one chunk share one GET. Log bytes pass through chunk buffers (off the
// Go heap, see chunkBuffers) on a miss and are read from the file on a
// hit, so no chunk stays on the Go heap beyond a read.
//
// The cache is cleared at start (NewChunkCache truncates the slot file):
// a restart begins cold, so bytes written by a crashed process, or cut at
// another chunk size, are never served, and the file needs no fsync.
// Cached bytes are checked like any bytes from the bucket (batch framing,
// offsets, CRC); the Reader drops a segment's chunks when they fail the
// checks and reads them again once.
//
// Read-ahead (chunk_readahead.go): when reads of an object go on
// sequentially (see readAheadSpan) the next ReadAheadChunks chunks (fewer
// in a cache too small for them, see readAheadDepth) are
// fetched by background goroutines, at most readAheadParallel at once,
// stopped by Close; their failures are only logged. Safe for concurrent
// use.
type ChunkCache struct {
	opts   ChunkCacheOptions
	logger *slog.Logger
	// readAheadDepth is the read-ahead depth: ReadAheadChunks, within what the
	// cache holds (readAheadDepth).
	readAheadDepth int64
	buffers        *chunkBuffers // of ChunkBytes
	// file is the slot file, open for the life of the cache (closed by
	// the GC with the cache: reads may go on after Close); path names it
	// for the descriptor each sent region gets.
	file *os.File
	path string

	stop           context.Context // cancelled by Close
	cancel         context.CancelFunc
	background     sync.WaitGroup // read-ahead goroutines
	readAheadSlots chan struct{}

	mu struct {
		sync.Mutex
		lru      *list.List // of *chunkEntry, most recently used first
		byKey    map[chunkKey]*list.Element
		slots    slotTable
		inflight map[chunkKey]*chunkFetch
		lastRead map[remotemeta.SegmentID]int64 // the last chunk of the previous read
		closed   bool
	}
}

// chunkKey names chunk index of the .log object of segment id. Segment ids
// are fresh per copy attempt and objects immutable: a chunk never goes
// stale.
type chunkKey struct {
	id    remotemeta.SegmentID
	index int64
}

// chunkEntry is a chunk in the cache: its bytes are [0, sizeBytes) of
// slot. Immutable once in the LRU.
type chunkEntry struct {
	key       chunkKey
	slot      int
	sizeBytes int64
	batches   chunkBatches // the checked batches, to send from the file
}

// chunkFetch is one GET of a chunk in flight; done is closed once the
// chunk is in the cache or the GET failed (err).
type chunkFetch struct {
	done chan struct{}
	err  error
}

// cachedObject is the .log object a cache read is about. fetch reads
// exactly len(dst) bytes at off of it from the bucket; check builds the
// batch table of a chunk fetched from position start (nil: no table).
type cachedObject struct {
	id        remotemeta.SegmentID
	sizeBytes int64
	fetch     func(ctx context.Context, off int64, dst []byte) error
	check     func(ctx context.Context, start int64, chunk []byte) chunkBatches
}

// NewChunkCache creates Dir if needed, empties the slot file and removes
// the chunk files of earlier versions; other files are left.
func NewChunkCache(opts ChunkCacheOptions) (*ChunkCache, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := clearChunkDir(opts.Dir); err != nil {
		return nil, err
	}
	path := filepath.Join(opts.Dir, slotFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("remote chunk cache file %s is unusable (set strata.remote.cache.dir): %w", path, err)
	}
	c := &ChunkCache{opts: opts, logger: opts.Logger, file: f, path: path, readAheadSlots: make(chan struct{}, readAheadParallel)}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	c.buffers = newChunkBuffers(int(opts.ChunkBytes), keptChunkBuffers(opts.ChunkBytes))
	c.stop, c.cancel = context.WithCancel(context.Background())
	c.mu.lru = list.New()
	c.mu.byKey = make(map[chunkKey]*list.Element)
	slots := opts.MaxBytes / opts.ChunkBytes
	c.mu.slots = newSlotTable(int(slots))
	c.readAheadDepth = readAheadDepth(int64(opts.ReadAheadChunks), slots)
	c.mu.inflight = make(map[chunkKey]*chunkFetch)
	c.mu.lastRead = make(map[remotemeta.SegmentID]int64)
	return c, nil
}

func clearChunkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("remote chunk cache directory %s is unusable (set strata.remote.cache.dir): %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("remote chunk cache directory %s is unreadable: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && (strings.HasSuffix(name, oldChunkFileSuffix) || strings.HasSuffix(name, oldChunkTempSuffix)) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("clearing the remote chunk cache %s: %w", dir, err)
			}
		}
	}
	return nil
}

// Close stops the read-ahead, waits for it and unmaps the kept chunk
// buffers. Reads may still run afterwards (without read-ahead or kept
// buffers); the slot file is emptied at the next start.
func (c *ChunkCache) Close() {
	c.mu.Lock()
	c.mu.closed = true
	c.mu.Unlock()
	c.cancel()
	c.background.Wait()
	c.buffers.close()
}

// readAt fills dst with the bytes of obj from off, through the chunks it
// touches; off+len(dst) must be within obj.sizeBytes. hit reports whether
// any byte came from a cached chunk.
func (c *ChunkCache) readAt(ctx context.Context, obj cachedObject, off int64, dst []byte) (hit bool, err error) {
	for len(dst) > 0 {
		k := off / c.opts.ChunkBytes
		start, length := chunkBounds(k, c.opts.ChunkBytes, obj.sizeBytes)
		within := off - start
		n := min(length-within, int64(len(dst)))
		h, err := c.readChunk(ctx, obj, chunkKey{id: obj.id, index: k}, length, within, dst[:n])
		if err != nil {
			return hit, err
		}
		hit = hit || h
		dst, off = dst[n:], off+n
	}
	return hit, nil
}

// readChunk fills dst from byte within of chunk k (length bytes long):
// from its slot, or by waiting for the GET in flight, or by its own GET.
func (c *ChunkCache) readChunk(ctx context.Context, obj cachedObject, k chunkKey, length, within int64, dst []byte) (hit bool, err error) {
	for range chunkAttempts {
		c.mu.Lock()
		e, cached := c.pinLocked(k)
		var wait *chunkFetch
		if !cached {
			wait = c.mu.inflight[k]
		}
		if !cached && wait == nil {
			f := c.startFetchLocked(k)
			c.mu.Unlock()
			_, err := c.fetchChunk(ctx, obj, k, f, length, within, dst, false)
			return false, err
		}
		c.mu.Unlock()
		if cached {
			ok := c.readSlot(e, within, dst)
			c.unpin(e.slot)
			if ok {
				return true, nil
			}
			continue
		}
		select {
		case <-wait.done:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return false, obj.fetch(ctx, k.index*c.opts.ChunkBytes+within, dst)
}

// pinLocked returns the entry of k, marked recently used, with its slot
// pinned: the caller unpins it once done with the bytes.
func (c *ChunkCache) pinLocked(k chunkKey) (*chunkEntry, bool) {
	el, ok := c.mu.byKey[k]
	if !ok {
		return nil, false
	}
	c.mu.lru.MoveToFront(el)
	e := el.Value.(*chunkEntry)
	c.mu.slots.pin(e.slot)
	return e, true
}

func (c *ChunkCache) unpin(slot int) {
	c.mu.Lock()
	c.mu.slots.unpin(slot)
	c.mu.Unlock()
}

func (c *ChunkCache) startFetchLocked(k chunkKey) *chunkFetch {
	f := &chunkFetch{done: make(chan struct{})}
	c.mu.inflight[k] = f
	return f
}

// slotStart is where slot begins in the slot file.
func (c *ChunkCache) slotStart(slot int) int64 { return int64(slot) * c.opts.ChunkBytes }

// readSlot reads dst from byte within of e's chunk; e's slot is pinned. A
// failed or short read drops e: the caller looks the chunk up again.
func (c *ChunkCache) readSlot(e *chunkEntry, within int64, dst []byte) bool {
	if n, err := c.file.ReadAt(dst, c.slotStart(e.slot)+within); n < len(dst) {
		c.logger.Warn("remote chunk cache: unreadable chunk dropped", "file", c.path, "slot", e.slot, "err", err)
		c.dropEntry(e)
		return false
	}
	return true
}

// fetchChunk GETs chunk k of obj into a pooled buffer, copies the part
// from within into dst (dst may be nil: read-ahead), builds its batch
// table, caches the chunk and then ends the fetch f, waking its waiters.
// e is the chunk's entry when it is now in the cache, nil when not; with
// pin its slot is pinned from the moment it is cached, so that no other
// fetch evicts it before the caller reads it (the caller unpins it).
func (c *ChunkCache) fetchChunk(ctx context.Context, obj cachedObject, k chunkKey, f *chunkFetch, length, within int64, dst []byte, pin bool) (e *chunkEntry, err error) {
	buf := c.buffers.get()
	defer c.buffers.put(buf)
	chunk := buf[:length]
	start := k.index * c.opts.ChunkBytes
	err = obj.fetch(ctx, start, chunk)
	if err == nil {
		copy(dst, chunk[within:])
		var table chunkBatches
		if obj.check != nil {
			table = obj.check(ctx, start, chunk)
		}
		e = c.store(k, chunk, table, pin)
	}
	c.mu.Lock()
	delete(c.mu.inflight, k)
	c.mu.Unlock()
	f.err = err
	close(f.done)
	return e, err
}

// chunkRef is a cached chunk opened for sending: its bytes are [Base,
// Base+size) of File, a descriptor of the slot file that the receiver
// closes, and Release unpins the slot; call it once, after the last read
// of those bytes.
type chunkRef struct {
	File    *os.File
	Base    int64
	Batches chunkBatches
	Release func()
}

// openChunk opens chunk k of obj for sending, fetching the chunk first
// when it is neither cached nor in flight. ok is false, with nothing open
// or pinned, when the chunk could not be cached (no slot free, or its
// write failed) or was evicted each time before it could be pinned: the
// caller reads through readAt then.
func (c *ChunkCache) openChunk(ctx context.Context, obj cachedObject, k int64) (ref chunkRef, ok bool, err error) {
	key := chunkKey{id: obj.id, index: k}
	_, length := chunkBounds(k, c.opts.ChunkBytes, obj.sizeBytes)
	for range chunkAttempts {
		c.mu.Lock()
		e, cached := c.pinLocked(key)
		var wait *chunkFetch
		if !cached {
			wait = c.mu.inflight[key]
		}
		if !cached && wait == nil {
			fetch := c.startFetchLocked(key)
			c.mu.Unlock()
			e, err := c.fetchChunk(ctx, obj, key, fetch, length, 0, nil, true)
			if err != nil || e == nil {
				return chunkRef{}, false, err
			}
			return c.refOf(e)
		}
		c.mu.Unlock()
		if cached {
			return c.refOf(e)
		}
		select {
		case <-wait.done:
		case <-ctx.Done():
			return chunkRef{}, false, ctx.Err()
		}
	}
	return chunkRef{}, false, nil
}

// refOf opens the cached chunk e, whose slot the caller pinned, for
// sending; on failure the slot is unpinned and ok is false.
func (c *ChunkCache) refOf(e *chunkEntry) (ref chunkRef, ok bool, err error) {
	f, err := os.Open(c.path)
	if err != nil {
		c.unpin(e.slot)
		c.logger.Warn("remote chunk cache: cannot open the cache file (served without sendfile)", "file", c.path, "err", err)
		return chunkRef{}, false, nil
	}
	slot := e.slot
	return chunkRef{File: f, Base: c.slotStart(slot), Batches: e.batches, Release: func() { c.unpin(slot) }}, true, nil
}

// store writes chunk into a slot and adds it, with its batch table, to
// the LRU; the slot is a free one, or that of the least recently used
// chunk no reader has pinned. A failed write only costs the cache its
// entry. e is the chunk's entry, nil when it is not in the cache; with
// pin its slot is pinned (the caller unpins it).
func (c *ChunkCache) store(k chunkKey, chunk []byte, table chunkBatches, pin bool) (e *chunkEntry) {
	if int64(len(chunk)) > c.opts.ChunkBytes {
		return nil
	}
	c.mu.Lock()
	slot, fresh, ok := c.takeSlotLocked()
	c.mu.Unlock()
	if !ok {
		return nil
	}
	at := c.slotStart(slot)
	if fresh {
		preallocateRange(c.file, at, c.opts.ChunkBytes)
	}
	if _, err := c.file.WriteAt(chunk, at); err != nil {
		c.logger.Warn("remote chunk cache: cannot write a chunk (served without caching it)", "file", c.path, "slot", slot, "err", err)
		c.mu.Lock()
		c.mu.slots.release(slot)
		c.mu.Unlock()
		return nil
	}
	e = &chunkEntry{key: k, slot: slot, sizeBytes: int64(len(chunk)), batches: table}
	c.mu.Lock()
	c.insertLocked(e)
	if pin {
		c.mu.slots.pin(slot)
	}
	c.mu.Unlock()
	return e
}

// takeSlotLocked is a slot to write a chunk into: a free one, or the slot
// of the least recently used chunk whose slot is not pinned, evicted. ok
// is false when every slot is pinned.
func (c *ChunkCache) takeSlotLocked() (slot int, fresh, ok bool) {
	if slot, fresh, ok = c.mu.slots.take(); ok {
		return slot, fresh, true
	}
	for el := c.mu.lru.Back(); el != nil; el = el.Prev() {
		if !c.mu.slots.pinned(el.Value.(*chunkEntry).slot) {
			c.removeLocked(el)
			return c.mu.slots.take()
		}
	}
	return 0, false, false
}

// insertLocked adds e as the most recently used chunk, replacing an
// entry of the same chunk.
func (c *ChunkCache) insertLocked(e *chunkEntry) {
	if old, ok := c.mu.byKey[e.key]; ok {
		c.removeLocked(old)
	}
	c.mu.byKey[e.key] = c.mu.lru.PushFront(e)
}

// removeLocked takes el out of the cache and releases its slot.
func (c *ChunkCache) removeLocked(el *list.Element) {
	e := c.mu.lru.Remove(el).(*chunkEntry)
	delete(c.mu.byKey, e.key)
	c.mu.slots.release(e.slot)
}

// dropEntry forgets e if it is still in the cache.
func (c *ChunkCache) dropEntry(e *chunkEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.mu.byKey[e.key]; ok && el.Value.(*chunkEntry) == e {
		c.removeLocked(el)
	}
}

// dropObject forgets every cached chunk of the object of id (its bytes
// failed the checks).
func (c *ChunkCache) dropObject(id remotemeta.SegmentID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, el := range c.mu.byKey {
		if k.id == id {
			c.removeLocked(el)
		}
	}
}
