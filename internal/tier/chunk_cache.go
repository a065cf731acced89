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
	// Dir holds the chunk files (strata.remote.cache.dir); it is created
	// when missing.
	Dir string
	// MaxBytes bounds the bytes of all chunk files
	// (strata.remote.cache.size.bytes); positive.
	MaxBytes int64
	// ChunkBytes is the size of a chunk (strata.remote.chunk.bytes).
	ChunkBytes int64
	// ReadAheadChunks is how many chunks are fetched ahead of a sequential
	// reader (strata.remote.readahead.chunks); 0 turns read-ahead off.
	ReadAheadChunks int
	// Logger gets the failures that no reader sees (read-ahead, writing a
	// chunk file); nil means slog.Default().
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

// File names: a chunk is "<segment id>-<chunk index>-<file number>.chunk",
// written as the same name plus ".tmp" and renamed into place. The file
// number is fresh per write, so a file being removed after its eviction
// never shares a name with a newer copy of the same chunk.
const (
	chunkFileSuffix = ".chunk"
	chunkTempSuffix = ".chunk.tmp"
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

// chunkAttempts bounds how often one read looks a chunk up again after
// the file it found was evicted or the GET it waited for failed; then it
// reads its bytes from the bucket itself, bypassing the cache.
const chunkAttempts = 3

// ChunkCache is a bounded on-disk cache of the chunks of remote .log
// objects (DESIGN §4), an LRU by bytes. Each chunk is a file in Dir,
// written to a temporary name and renamed, so a reader opens a whole chunk
// or none. Concurrent misses of one chunk share one GET. Log bytes pass
// through pooled chunk buffers on a miss and are read from the files on a
// hit, so no chunk stays on the Go heap beyond a read.
//
// The cache is cleared at start (NewChunkCache removes the chunk and
// temporary files in Dir): a restart begins cold, but a chunk written by a
// crashed process, or cut at another chunk size, is never served, and the
// files need no fsync. Cached bytes are checked like any bytes from the
// bucket (batch framing, offsets, CRC); the Reader drops a segment's
// chunks when they fail the checks and reads them again once.
//
// Read-ahead: when reads of an object go on sequentially (see
// readAheadSpan) the next ReadAheadChunks chunks are fetched by background
// goroutines, at most readAheadParallel at once, stopped by Close; their
// failures are only logged. Safe for concurrent use.
type ChunkCache struct {
	opts    ChunkCacheOptions
	logger  *slog.Logger
	buffers sync.Pool // *[]byte of ChunkBytes

	stop           context.Context // cancelled by Close
	cancel         context.CancelFunc
	background     sync.WaitGroup // read-ahead goroutines
	readAheadSlots chan struct{}

	mu struct {
		sync.Mutex
		lru        *list.List // of *chunkEntry, most recently used first
		byKey      map[chunkKey]*list.Element
		usedBytes  int64
		inflight   map[chunkKey]*chunkFetch
		lastRead   map[remotemeta.SegmentID]int64 // the last chunk of the previous read
		nextFileNo uint64
		closed     bool
	}
}

// chunkKey names chunk index of the .log object of segment id. Segment ids
// are fresh per copy attempt and objects immutable: a chunk never goes
// stale.
type chunkKey struct {
	id    remotemeta.SegmentID
	index int64
}

type chunkEntry struct {
	key       chunkKey
	path      string
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

// NewChunkCache creates Dir if needed and removes the chunk files and
// temporary files a previous process left there; other files are left.
func NewChunkCache(opts ChunkCacheOptions) (*ChunkCache, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := clearChunkDir(opts.Dir); err != nil {
		return nil, err
	}
	c := &ChunkCache{opts: opts, logger: opts.Logger, readAheadSlots: make(chan struct{}, readAheadParallel)}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	c.buffers.New = func() any {
		b := make([]byte, opts.ChunkBytes)
		return &b
	}
	c.stop, c.cancel = context.WithCancel(context.Background())
	c.mu.lru = list.New()
	c.mu.byKey = make(map[chunkKey]*list.Element)
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
		if e.Type().IsRegular() && (strings.HasSuffix(name, chunkFileSuffix) || strings.HasSuffix(name, chunkTempSuffix)) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("clearing the remote chunk cache %s: %w", dir, err)
			}
		}
	}
	return nil
}

// Close stops the read-ahead and waits for it. Reads may still run
// afterwards (without read-ahead); the files stay until the next start.
func (c *ChunkCache) Close() {
	c.mu.Lock()
	c.mu.closed = true
	c.mu.Unlock()
	c.cancel()
	c.background.Wait()
}

// readAt fills dst with the bytes of obj from off, through the chunks it
// touches; off+len(dst) must be within obj.sizeBytes. hit reports whether
// any byte came from a cached chunk file.
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
// from its file, or by waiting for the GET in flight, or by its own GET.
func (c *ChunkCache) readChunk(ctx context.Context, obj cachedObject, k chunkKey, length, within int64, dst []byte) (hit bool, err error) {
	for range chunkAttempts {
		c.mu.Lock()
		path, cached := c.lookupLocked(k)
		var wait *chunkFetch
		if !cached {
			wait = c.mu.inflight[k]
		}
		if !cached && wait == nil {
			f := c.startFetchLocked(k)
			c.mu.Unlock()
			_, err := c.fetchChunk(ctx, obj, k, f, length, within, dst)
			return false, err
		}
		c.mu.Unlock()
		if cached {
			if c.readFile(k, path, within, dst) {
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

// lookupLocked returns the file of k and marks it recently used.
func (c *ChunkCache) lookupLocked(k chunkKey) (string, bool) {
	e, ok := c.mu.byKey[k]
	if !ok {
		return "", false
	}
	c.mu.lru.MoveToFront(e)
	return e.Value.(*chunkEntry).path, true
}

func (c *ChunkCache) startFetchLocked(k chunkKey) *chunkFetch {
	f := &chunkFetch{done: make(chan struct{})}
	c.mu.inflight[k] = f
	return f
}

// readFile reads dst from byte within of the chunk file at path. A file
// gone (evicted meanwhile) or short is a miss; a short one is dropped.
func (c *ChunkCache) readFile(k chunkKey, path string, within int64, dst []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		c.dropFile(k, path)
		return false
	}
	defer f.Close()
	if n, err := f.ReadAt(dst, within); n < len(dst) {
		c.logger.Warn("remote chunk cache: unreadable chunk file dropped", "file", path, "err", err)
		c.dropFile(k, path)
		return false
	}
	return true
}

// fetchChunk GETs chunk k of obj into a pooled buffer, copies the part
// from within into dst (dst may be nil: read-ahead), builds its batch
// table, caches the chunk and then ends the fetch f, waking its waiters.
// stored reports whether the chunk is now in the cache.
func (c *ChunkCache) fetchChunk(ctx context.Context, obj cachedObject, k chunkKey, f *chunkFetch, length, within int64, dst []byte) (stored bool, err error) {
	buf := c.buffers.Get().(*[]byte)
	defer c.buffers.Put(buf)
	chunk := (*buf)[:length]
	start := k.index * c.opts.ChunkBytes
	err = obj.fetch(ctx, start, chunk)
	if err == nil {
		copy(dst, chunk[within:])
		var table chunkBatches
		if obj.check != nil {
			table = obj.check(ctx, start, chunk)
		}
		stored = c.store(k, chunk, table)
	}
	c.mu.Lock()
	delete(c.mu.inflight, k)
	c.mu.Unlock()
	f.err = err
	close(f.done)
	return stored, err
}

// openChunk opens the file of chunk k of obj, fetching the chunk first
// when it is neither cached nor in flight, and returns it with the chunk's
// batch table; the caller closes f. ok is false, with nothing open, when
// the chunk could not be cached (larger than the cache, its file not
// written or gone each time): the caller reads through readAt then.
func (c *ChunkCache) openChunk(ctx context.Context, obj cachedObject, k int64) (f *os.File, table chunkBatches, ok bool, err error) {
	key := chunkKey{id: obj.id, index: k}
	_, length := chunkBounds(k, c.opts.ChunkBytes, obj.sizeBytes)
	for range chunkAttempts {
		c.mu.Lock()
		el, cached := c.mu.byKey[key]
		var wait *chunkFetch
		if cached {
			c.mu.lru.MoveToFront(el)
		} else {
			wait = c.mu.inflight[key]
		}
		if !cached && wait == nil {
			fetch := c.startFetchLocked(key)
			c.mu.Unlock()
			stored, err := c.fetchChunk(ctx, obj, key, fetch, length, 0, nil)
			if err != nil || !stored {
				return nil, nil, false, err
			}
			continue
		}
		c.mu.Unlock()
		if cached {
			e := el.Value.(*chunkEntry) // immutable once in the LRU
			if f, err := os.Open(e.path); err == nil {
				return f, e.batches, true, nil
			}
			c.dropFile(key, e.path)
			continue
		}
		select {
		case <-wait.done:
		case <-ctx.Done():
			return nil, nil, false, ctx.Err()
		}
	}
	return nil, nil, false, nil
}

// store writes chunk as the file of k and adds it, with its batch table,
// to the LRU, evicting the least recently used chunks to stay within
// MaxBytes. A failed write only costs the cache its entry; stored says
// whether the chunk is in the cache.
func (c *ChunkCache) store(k chunkKey, chunk []byte, table chunkBatches) (stored bool) {
	size := int64(len(chunk))
	if size > c.opts.MaxBytes {
		return false
	}
	c.mu.Lock()
	c.mu.nextFileNo++
	path := filepath.Join(c.opts.Dir, fmt.Sprintf("%s-%d-%d%s", k.id, k.index, c.mu.nextFileNo, chunkFileSuffix))
	c.mu.Unlock()
	if err := writeChunkFile(path, chunk); err != nil {
		c.logger.Warn("remote chunk cache: cannot write a chunk (served without caching it)", "file", path, "err", err)
		return false
	}
	c.mu.Lock()
	evicted := c.insertLocked(&chunkEntry{key: k, path: path, sizeBytes: size, batches: table})
	c.mu.Unlock()
	removeChunkFiles(evicted)
	return true
}

// insertLocked adds e as the most recently used chunk and returns the
// files of the entries it replaced or evicted, to remove after unlocking.
func (c *ChunkCache) insertLocked(e *chunkEntry) []string {
	var evicted []string
	if old, ok := c.mu.byKey[e.key]; ok {
		evicted = append(evicted, c.removeLocked(old))
	}
	for c.mu.usedBytes+e.sizeBytes > c.opts.MaxBytes {
		evicted = append(evicted, c.removeLocked(c.mu.lru.Back()))
	}
	c.mu.byKey[e.key] = c.mu.lru.PushFront(e)
	c.mu.usedBytes += e.sizeBytes
	return evicted
}

func (c *ChunkCache) removeLocked(el *list.Element) string {
	e := c.mu.lru.Remove(el).(*chunkEntry)
	delete(c.mu.byKey, e.key)
	c.mu.usedBytes -= e.sizeBytes
	return e.path
}

// dropFile forgets k if its entry is still the file at path, and removes
// that file.
func (c *ChunkCache) dropFile(k chunkKey, path string) {
	c.mu.Lock()
	if el, ok := c.mu.byKey[k]; ok && el.Value.(*chunkEntry).path == path {
		c.removeLocked(el)
	}
	c.mu.Unlock()
	removeChunkFiles([]string{path})
}

// dropObject forgets every cached chunk of the object of id (its bytes
// failed the checks) and removes their files.
func (c *ChunkCache) dropObject(id remotemeta.SegmentID) {
	var dropped []string
	c.mu.Lock()
	for k, el := range c.mu.byKey {
		if k.id == id {
			dropped = append(dropped, c.removeLocked(el))
		}
	}
	c.mu.Unlock()
	removeChunkFiles(dropped)
}

// noteRead records that a read of obj covered the chunks [first, last]
// and starts the read-ahead that readAheadSpan decides: chunks neither
// cached nor in flight, while read-ahead slots are free.
func (c *ChunkCache) noteRead(obj cachedObject, first, last int64) {
	if c.opts.ReadAheadChunks <= 0 {
		return
	}
	var started []chunkKey
	var fetches []*chunkFetch
	c.mu.Lock()
	prev, havePrev := c.mu.lastRead[obj.id]
	c.rememberReadLocked(obj.id, last)
	from, to := readAheadSpan(prev, havePrev, first, last, int64(c.opts.ReadAheadChunks), chunkCount(obj.sizeBytes, c.opts.ChunkBytes))
	for k := from; k < to && !c.mu.closed; k++ {
		key := chunkKey{id: obj.id, index: k}
		if _, ok := c.mu.byKey[key]; ok {
			continue
		}
		if _, ok := c.mu.inflight[key]; ok {
			continue
		}
		if !c.takeReadAheadSlot() {
			break
		}
		c.background.Add(1)
		started = append(started, key)
		fetches = append(fetches, c.startFetchLocked(key))
	}
	c.mu.Unlock()
	for i, k := range started {
		go c.readAhead(obj, k, fetches[i])
	}
}

func (c *ChunkCache) takeReadAheadSlot() bool {
	select {
	case c.readAheadSlots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (c *ChunkCache) rememberReadLocked(id remotemeta.SegmentID, last int64) {
	if _, ok := c.mu.lastRead[id]; !ok && len(c.mu.lastRead) >= trackedObjectsMax {
		for forget := range c.mu.lastRead {
			delete(c.mu.lastRead, forget)
			break
		}
	}
	c.mu.lastRead[id] = last
}

// readAheadFollowing reads ahead across objects: when the last read of
// cur ended within read-ahead distance of its end, the first chunks of the
// objects after it (next, in order) that followingReadAhead plans are
// fetched in the background, those neither cached nor in flight; one
// goroutine per object, each running prepare(ctx, i) first (the Reader
// fetches next[i]'s offset index). Nothing starts when every planned chunk
// is cached or in flight already, so a second reader of the same objects,
// or a later pass over them, reads ahead like the first.
func (c *ChunkCache) readAheadFollowing(cur cachedObject, next []cachedObject, prepare func(ctx context.Context, i int)) {
	if c.opts.ReadAheadChunks <= 0 || len(next) == 0 {
		return
	}
	counts := make([]int64, len(next))
	for i, o := range next {
		counts[i] = chunkCount(o.sizeBytes, c.opts.ChunkBytes)
	}
	c.mu.Lock()
	last, ok := c.mu.lastRead[cur.id]
	if !ok || c.mu.closed {
		c.mu.Unlock()
		return
	}
	plan := followingReadAhead(last, int64(c.opts.ReadAheadChunks), chunkCount(cur.sizeBytes, c.opts.ChunkBytes), counts)
	type objectFetches struct {
		i       int
		keys    []chunkKey
		fetches []*chunkFetch
	}
	var started []objectFetches
	for i, n := range plan {
		of := objectFetches{i: i}
		for k := range n {
			key := chunkKey{id: next[i].id, index: k}
			if _, ok := c.mu.byKey[key]; ok {
				continue
			}
			if _, ok := c.mu.inflight[key]; ok {
				continue
			}
			of.keys = append(of.keys, key)
		}
		if len(of.keys) == 0 {
			continue
		}
		if !c.takeReadAheadSlot() {
			break
		}
		for _, key := range of.keys {
			of.fetches = append(of.fetches, c.startFetchLocked(key))
		}
		c.background.Add(1)
		started = append(started, of)
	}
	c.mu.Unlock()
	for _, of := range started {
		obj := next[of.i]
		go func() {
			defer c.background.Done()
			defer func() { <-c.readAheadSlots }()
			ctx, cancel := context.WithTimeout(c.stop, readAheadTimeout)
			defer cancel()
			prepare(ctx, of.i)
			// Every fetch started above is ended, even once ctx is done,
			// so that no reader waits for it forever.
			for j, k := range of.keys {
				_, length := chunkBounds(k.index, c.opts.ChunkBytes, obj.sizeBytes)
				if _, err := c.fetchChunk(ctx, obj, k, of.fetches[j], length, 0, nil); err != nil && c.stop.Err() == nil {
					c.logger.Debug("remote chunk read-ahead failed", "segment", k.id.String(), "chunk", k.index, "err", err)
				}
			}
		}()
	}
}

// readAhead fetches chunk k of obj into the cache in the background.
func (c *ChunkCache) readAhead(obj cachedObject, k chunkKey, f *chunkFetch) {
	defer c.background.Done()
	defer func() { <-c.readAheadSlots }()
	ctx, cancel := context.WithTimeout(c.stop, readAheadTimeout)
	defer cancel()
	_, length := chunkBounds(k.index, c.opts.ChunkBytes, obj.sizeBytes)
	if _, err := c.fetchChunk(ctx, obj, k, f, length, 0, nil); err != nil && c.stop.Err() == nil {
		c.logger.Debug("remote chunk read-ahead failed", "segment", k.id.String(), "chunk", k.index, "err", err)
	}
}

// writeChunkFile writes b to a temporary file and renames it to path, so
// that path holds the whole chunk or does not exist. No fsync: the cache
// is cleared at start, so only this process ever reads the file.
func writeChunkFile(path string, b []byte) error {
	tmp := strings.TrimSuffix(path, chunkFileSuffix) + chunkTempSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	preallocate(f, int64(len(b)))
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func removeChunkFiles(paths []string) {
	for _, p := range paths {
		os.Remove(p) // gone already is fine; a leftover is cleared at the next start
	}
}
