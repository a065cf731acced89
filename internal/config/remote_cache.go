package config

import "fmt"

// checkRemoteCache checks the chunk cache against the chunk size: a cache
// is off (0) or holds at least two chunks. A batch that crosses a chunk
// boundary is read from both chunks; a cache of one evicts the first to
// hold the second, so every such read fetches both chunks again, and a
// consumer whose remote reads keep outlasting remote.fetch.max.wait.ms
// gets empty fetches for ever.
func (b *Broker) checkRemoteCache(g getter) error {
	cache, chunk := b.RemoteTier.CacheBytes, int64(b.RemoteTier.ChunkBytes)
	if cache == 0 || cache >= 2*chunk {
		return nil
	}
	return &Error{Key: "strata.remote.cache.size.bytes", Value: g.str("strata.remote.cache.size.bytes"),
		Msg: fmt.Sprintf("must be 0 (no chunk cache) or at least two chunks of strata.remote.chunk.bytes (2 × %d = %d); raise it, set 0, or lower strata.remote.chunk.bytes",
			chunk, 2*chunk)}
}
