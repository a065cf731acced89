package tier

// A remote segment's .log object is read and cached in chunks of
// chunkBytes aligned in the object: chunk k holds [k·chunkBytes,
// (k+1)·chunkBytes), the last one shorter. These pure functions place
// byte ranges on chunks and decide read-ahead; chunk_cache.go acts on them.

// chunkSpan is the chunks [first, last] that the bytes [off, off+n) of an
// object touch; n must be positive.
func chunkSpan(off, n, chunkBytes int64) (first, last int64) {
	return off / chunkBytes, (off + n - 1) / chunkBytes
}

// chunkBounds is where chunk k lies in an object of objectBytes: its first
// byte and its length (chunkBytes, or less for the last chunk).
func chunkBounds(k, chunkBytes, objectBytes int64) (start, length int64) {
	start = k * chunkBytes
	return start, min(chunkBytes, objectBytes-start)
}

// chunkCount is how many chunks an object of objectBytes has.
func chunkCount(objectBytes, chunkBytes int64) int64 {
	return (objectBytes + chunkBytes - 1) / chunkBytes
}

// readAheadSpan decides which chunks to fetch ahead of a read of the
// chunks [first, last] of one object of count chunks: the depth chunks
// after last, [from, to), when the read is sequential, else none. A read
// is sequential when it starts in the chunk where the previous read of
// the object ended (prevLast, known when havePrev) or in the one after,
// or when it starts in chunk 0: a consumer that crossed from the previous
// segment reads on from there.
func readAheadSpan(prevLast int64, havePrev bool, first, last, depth, count int64) (from, to int64) {
	sequential := first == 0 || (havePrev && (first == prevLast || first == prevLast+1))
	if !sequential || depth <= 0 {
		return 0, 0
	}
	from = last + 1
	to = min(from+depth, count)
	if to <= from {
		return 0, 0
	}
	return from, to
}

// followingReadAhead is how many chunks at the start of each of the
// objects that follow (the next segments' .log, of nextCounts chunks each)
// to fetch after a read that ended in chunk last of an object of count
// chunks: the part of the read-ahead depth that runs past the object's
// end, spread over as many following objects as it reaches, so that a
// sequential reader crosses segments without waiting, even where segments
// are smaller than the read-ahead. The result has one entry per object it
// reaches (none when the depth stays inside the object).
func followingReadAhead(last, depth, count int64, nextCounts []int64) []int64 {
	left := max(0, min(depth, last+depth-(count-1)))
	var out []int64
	for _, n := range nextCounts {
		if left <= 0 {
			break
		}
		take := min(left, n)
		out = append(out, take)
		left -= take
	}
	return out
}

// readAheadDepth is the read-ahead depth of a cache of slots chunks: the
// configured depth, but at most slots-1. A sequential reader's read-ahead
// then never evicts the chunk it reads: with a deeper read-ahead the
// chunks fetched ahead evict the reader's chunk, and each other, and
// every chunk is fetched again, at worst for ever (a remote read that
// outlasts remote.fetch.max.wait.ms finds its chunk evicted at the next
// fetch).
func readAheadDepth(configured, slots int64) int64 {
	return max(0, min(configured, slots-1))
}
