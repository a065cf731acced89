package tier

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// How the Reader gets the bytes of a .log object: through the chunk cache
// when it has one, else with a ranged GET of exactly the bytes asked.

// readLog reads exactly [off, off+n) of seg's .log; off+n must be within
// seg.SizeBytes. hit reports whether any byte came from a cached chunk.
func (r *Reader) readLog(ctx context.Context, seg remotemeta.RemoteSegment, off, n int64) (b []byte, hit bool, err error) {
	b = make([]byte, n)
	if r.Chunks == nil {
		return b, false, r.fetchLog(ctx, SegmentKey(seg, SuffixLog), off, b)
	}
	hit, err = r.Chunks.readAt(ctx, r.logObject(seg), off, b)
	if err != nil {
		return nil, hit, err
	}
	return b, hit, nil
}

// noteLogRead tells the chunk cache which bytes of seg's .log a read
// used, for its read-ahead.
func (r *Reader) noteLogRead(seg remotemeta.RemoteSegment, off, n int64) {
	if r.Chunks == nil || n <= 0 {
		return
	}
	first, last := chunkSpan(off, n, r.Chunks.opts.ChunkBytes)
	r.Chunks.noteRead(r.logObject(seg), first, last)
}

// ReadAheadFollowing tells the reader that the segments following come
// after seg in its partition, in order. When the last read of seg came
// within read-ahead distance of its end, the offset indexes and first
// chunks of as many of them as the read-ahead depth reaches are fetched in
// the background, so a sequential consumer crosses into them without
// waiting on the bucket. ReadAheadObjects bounds how many are worth naming.
func (r *Reader) ReadAheadFollowing(seg remotemeta.RemoteSegment, following []remotemeta.RemoteSegment) {
	if r.Chunks == nil {
		return
	}
	var objs []cachedObject
	for _, next := range following {
		if next.State != remotemeta.CopyFinished {
			break
		}
		objs = append(objs, r.logObject(next))
	}
	r.Chunks.readAheadFollowing(r.logObject(seg), objs, func(ctx context.Context, i int) {
		if _, err := r.offsetIndex(ctx, following[i]); err != nil && ctx.Err() == nil {
			r.Chunks.logger.Debug("remote index read-ahead failed", "segment", following[i].ID.String(), "err", err)
		}
	})
}

// ReadAheadObjects is how many segments after the one read can receive
// read-ahead (each has at least one chunk): the read-ahead depth, or 0
// without a chunk cache.
func (r *Reader) ReadAheadObjects() int {
	if r.Chunks == nil {
		return 0
	}
	return int(r.Chunks.readAheadDepth)
}

func (r *Reader) logObject(seg remotemeta.RemoteSegment) cachedObject {
	key := SegmentKey(seg, SuffixLog)
	return cachedObject{
		id: seg.ID, sizeBytes: seg.SizeBytes,
		fetch: func(ctx context.Context, off int64, dst []byte) error {
			return r.fetchLog(ctx, key, off, dst)
		},
		check: func(ctx context.Context, start int64, chunk []byte) chunkBatches {
			return r.checkChunk(ctx, seg, start, chunk)
		},
	}
}

// checkChunk is the batch table of chunk, read from position start of
// seg's .log, walked from the first batch start the offset index knows in
// it. No index, no table: the chunk is then only read through Read.
func (r *Reader) checkChunk(ctx context.Context, seg remotemeta.RemoteSegment, start int64, chunk []byte) chunkBatches {
	idx, err := r.offsetIndex(ctx, seg)
	if err != nil {
		return nil
	}
	first, rel, ok := firstBatchIn(idx, start, start+int64(len(chunk)))
	if !ok {
		return nil
	}
	return checkChunkBatches(chunk, first-start, rel, seg)
}

// readVerified runs read, a read of seg's .log that checks its bytes.
// When they fail the checks, seg's cached chunks are dropped, and read
// runs once more if some of those bytes came from the cache: a damaged
// chunk is read again from the bucket, a corrupt object stays an
// error.
func (r *Reader) readVerified(seg remotemeta.RemoteSegment, read func() (hit bool, err error)) error {
	hit, err := read()
	if r.Chunks == nil || !errors.Is(err, ErrCorruptObject) {
		return err
	}
	r.Chunks.dropObject(seg.ID)
	if !hit {
		return err
	}
	if _, err = read(); errors.Is(err, ErrCorruptObject) {
		r.Chunks.dropObject(seg.ID)
	}
	return err
}

// fetchLog fills dst with the bytes of key from off by one ranged GET and
// counts them against the fetch quota. An object shorter than the
// metadata says is corrupt.
func (r *Reader) fetchLog(ctx context.Context, key string, off int64, dst []byte) error {
	n := int64(len(dst))
	rc, err := r.Store.GetRange(ctx, key, off, n)
	if errors.Is(err, objstore.ErrInvalidRange) {
		return corruptf(key, "object shorter than %d bytes: %v", off, err)
	}
	if err != nil {
		return fmt.Errorf("tier: get %s [%d, %d): %w", key, off, off+n, err)
	}
	defer rc.Close()
	_, err = io.ReadFull(rc, dst)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		// A short body is a cut connection or a short object: ask which.
		if size, herr := r.Store.Head(ctx, key); herr == nil && size < off+n {
			return corruptf(key, "object of %d bytes, shorter than the %d its metadata says", size, off+n)
		}
	}
	if err != nil {
		return fmt.Errorf("tier: read %s [%d, %d): %w", key, off, off+n, err)
	}
	r.FetchQuota.Take(n)
	return nil
}

// FetchThrottled reports whether the fetch quota
// (remote.log.manager.fetch.max.bytes.per.second) is used up for now; a
// fetch then skips its remote reads and answers those partitions with no
// records (KIP-956).
func (r *Reader) FetchThrottled() bool { return r.FetchQuota.Exceeded() }

// Close stops the chunk cache's read-ahead and waits for it. Reads may
// still be served afterwards.
func (r *Reader) Close() {
	if r.Chunks != nil {
		r.Chunks.Close()
	}
}
