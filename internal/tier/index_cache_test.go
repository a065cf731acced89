package tier

import "testing"

// A smaller bound evicts the least recently used indexes at once; a larger
// one keeps more.
func TestIndexCacheResize(t *testing.T) {
	c := newIndexCache(300)
	for i := range 3 {
		c.put(indexCacheKey{suffix: Suffix(i)}, i, 100)
	}
	c.get(indexCacheKey{suffix: 0}) // 0 is now the most recently used
	c.resize(150)
	if _, ok := c.get(indexCacheKey{suffix: 0}); !ok || c.order.Len() != 1 || c.usedBytes != 100 {
		t.Fatalf("after shrinking to 150: %d entries, %d bytes, 0 kept %v", c.order.Len(), c.usedBytes, ok)
	}
	c.resize(1000)
	for i := 1; i < 5; i++ {
		c.put(indexCacheKey{suffix: Suffix(i)}, i, 100)
	}
	if c.order.Len() != 5 {
		t.Fatalf("after growing to 1000: %d entries", c.order.Len())
	}
}
