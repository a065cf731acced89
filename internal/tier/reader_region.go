package tier

import (
	"context"
	"os"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// Region is a byte range of an open file that holds whole, checked
// batches, to send as they are (sendfile). The receiver closes File and
// then calls Release, which lets the cache reuse the bytes.
type Region struct {
	File *os.File
	Pos  int64
	Size int64
	// Next is the offset after the region's last batch: a read_committed
	// fetch lists the aborted transactions of the offsets up to it.
	Next    base.Offset
	Release func()
}

// ReadRegion is Read without copying the bytes into the broker: when the
// batch holding from is in the batch table of a cached chunk (see
// chunk_batches.go), it returns the file region of whole batches from
// that one, up to maxBytes but at least that batch, all inside one chunk.
// The chunk is fetched into the cache first when it is not there. ok is
// false, with nothing open, when the read cannot be served so (no chunk
// cache, or the batch crosses a chunk boundary, or the chunk is not
// cached); the caller reads with Read then, which checks every byte.
func (r *Reader) ReadRegion(ctx context.Context, seg remotemeta.RemoteSegment, from base.Offset, maxBytes int) (reg Region, ok bool, err error) {
	if r.Chunks == nil || seg.State != remotemeta.CopyFinished || !seg.Range.Contains(from) {
		return Region{}, false, nil
	}
	defer func() {
		if ok || err != nil {
			r.Stats.fetched(seg.TP, int(reg.Size), err)
		}
	}()
	idx, err := r.offsetIndex(ctx, seg)
	if err != nil {
		return Region{}, false, err
	}
	rel := uint32(from - seg.Range.Start)
	pos, _ := lookupOffset(idx, rel, seg.SizeBytes)
	// The batch table of pos's chunk starts at or before pos (at an index
	// entry, or at 0), so it holds the batch holding from unless that batch
	// ends past the chunk; then the next chunk's table, which starts at an
	// index entry past from, does not hold it either.
	k := pos / r.Chunks.opts.ChunkBytes
	ref, cached, err := r.Chunks.openChunk(ctx, r.logObject(seg), k)
	if err != nil || !cached {
		return Region{}, false, err
	}
	first, end, found := ref.Batches.span(rel, maxBytes)
	if !found {
		ref.File.Close()
		ref.Release()
		return Region{}, false, nil
	}
	start, size := int64(first.pos), int64(end.pos-first.pos)
	r.noteLogRead(seg, k*r.Chunks.opts.ChunkBytes+start, size)
	return Region{File: ref.File, Pos: ref.Base + start, Size: size,
		Next: seg.Range.Start + base.Offset(end.rel), Release: ref.Release}, true, nil
}
