package tier

import (
	"testing"

	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// BenchmarkChunkCacheStore writes chunks into a full cache, each evicting
// the least recently used: the cost per byte of filling the cache from
// the bucket, GET aside (slots overwritten in place).
func BenchmarkChunkCacheStore(b *testing.B) {
	const chunk = 8 << 20
	c, err := NewChunkCache(ChunkCacheOptions{Dir: b.TempDir(), MaxBytes: 32 * chunk, ChunkBytes: chunk})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, chunk)
	for i := range data {
		data[i] = byte(i * 31)
	}
	var id remotemeta.SegmentID
	b.SetBytes(chunk)
	b.ResetTimer()
	for i := range b.N {
		if c.store(chunkKey{id: id, index: int64(i)}, data, nil, false) == nil {
			b.Fatal("chunk not stored")
		}
	}
}
