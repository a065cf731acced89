package tier

import (
	"container/list"

	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// indexCacheKey names one decoded index of one remote segment. Segment ids
// are fresh per copy attempt and objects are immutable, so an entry never
// goes stale: it only ages out.
type indexCacheKey struct {
	id     remotemeta.SegmentID
	suffix Suffix
}

type indexCacheEntry struct {
	key       indexCacheKey
	value     any // []offsetEntry, []timeEntry or []AbortedTxn, never mutated
	costBytes int64
}

// indexCache is an LRU of decoded remote indexes bounded by the bytes of
// the index objects it holds (remote.log.index.file.cache.total.size.bytes).
// Not safe for concurrent use; the Reader guards it.
type indexCache struct {
	maxBytes  int64
	usedBytes int64
	order     *list.List // of *indexCacheEntry, most recently used first
	byKey     map[indexCacheKey]*list.Element
}

func newIndexCache(maxBytes int64) *indexCache {
	return &indexCache{maxBytes: maxBytes, order: list.New(), byKey: make(map[indexCacheKey]*list.Element)}
}

// resize bounds the cache to maxBytes, evicting the least recently used
// entries over it.
func (c *indexCache) resize(maxBytes int64) {
	c.maxBytes = maxBytes
	for c.usedBytes > c.maxBytes && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

func (c *indexCache) get(k indexCacheKey) (any, bool) {
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*indexCacheEntry).value, true
}

// put adds v at costBytes, evicting the least recently used entries to
// stay within maxBytes. An index larger than the whole cache is not kept.
func (c *indexCache) put(k indexCacheKey, v any, costBytes int64) {
	if costBytes > c.maxBytes {
		return
	}
	if e, ok := c.byKey[k]; ok {
		c.remove(e)
	}
	for c.usedBytes+costBytes > c.maxBytes {
		c.remove(c.order.Back())
	}
	c.byKey[k] = c.order.PushFront(&indexCacheEntry{key: k, value: v, costBytes: costBytes})
	c.usedBytes += costBytes
}

func (c *indexCache) remove(e *list.Element) {
	ent := c.order.Remove(e).(*indexCacheEntry)
	delete(c.byKey, ent.key)
	c.usedBytes -= ent.costBytes
}
