package tier

import (
	"context"

	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Read-ahead of the chunk cache: sequential readers of an object get its
// next chunks fetched in the background, and readers near its end the
// first chunks of the objects after it (chunk_plan.go decides how many).

// noteRead records that a read of obj covered the chunks [first, last]
// and starts the read-ahead that readAheadSpan decides: chunks neither
// cached nor in flight, while read-ahead slots are free.
func (c *ChunkCache) noteRead(obj cachedObject, first, last int64) {
	if c.readAheadDepth <= 0 {
		return
	}
	var started []chunkKey
	var fetches []*chunkFetch
	c.mu.Lock()
	prev, havePrev := c.mu.lastRead[obj.id]
	c.rememberReadLocked(obj.id, last)
	from, to := readAheadSpan(prev, havePrev, first, last, c.readAheadDepth, chunkCount(obj.sizeBytes, c.opts.ChunkBytes))
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
	if c.readAheadDepth <= 0 || len(next) == 0 {
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
	plan := followingReadAhead(last, c.readAheadDepth, chunkCount(cur.sizeBytes, c.opts.ChunkBytes), counts)
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
				if _, err := c.fetchChunk(ctx, obj, k, of.fetches[j], length, 0, nil, false); err != nil && c.stop.Err() == nil {
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
	if _, err := c.fetchChunk(ctx, obj, k, f, length, 0, nil, false); err != nil && c.stop.Err() == nil {
		c.logger.Debug("remote chunk read-ahead failed", "segment", k.id.String(), "chunk", k.index, "err", err)
	}
}
