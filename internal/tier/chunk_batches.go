package tier

import (
	"math"
	"sort"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// A cached chunk can be sent to a consumer straight from its file
// (sendfile), without reading it back into the broker, when the read is
// made of batches that were checked when the chunk came from the bucket.
// The chunk's batch table lists them: each whole batch lying inside the
// chunk, from the first batch start the chunk is known to hold, checked
// like any remote read (framing, contiguous offsets inside the segment,
// CRC). Bytes of batches that cross a chunk boundary, or that sit before
// the first known batch start, are not in the table: reads of them go
// through Reader.Read, which checks them on every read.
//
// A checked cached chunk is then trusted as local segments are: it lives on
// the broker's own disk, written once by this process (the cache is
// cleared at start).

// chunkBatch is one entry of a chunk's batch table.
type chunkBatch struct {
	pos uint32 // where the batch starts, in the chunk
	rel uint32 // its base offset, relative to the segment's Range.Start
}

// chunkBatches is a chunk's batch table: one entry per checked batch in
// order, then an end entry holding the position just past the last one and
// the offset after it. Fewer than two entries means no batch.
type chunkBatches []chunkBatch

// checkChunkBatches builds the batch table of chunk, which starts at
// position start of seg's .log object, walking from first, a position in
// chunk where a batch with relative base offset firstRel starts. The walk
// stops at the first batch that does not end inside the chunk. A batch that
// fails its checks ends the table empty: the chunk is then only read
// through Reader.Read, which reports the corruption.
func checkChunkBatches(chunk []byte, first int64, firstRel uint32, seg remotemeta.RemoteSegment) chunkBatches {
	if first < 0 || first >= int64(len(chunk)) || len(chunk) > math.MaxUint32 {
		return nil
	}
	var table chunkBatches
	pos, next := first, seg.Range.Start+base.Offset(firstRel)
	for {
		h, err := record.ParseHeader(chunk[pos:])
		if err != nil || h.Length < record.HeaderSize-record.LogOverhead || int64(h.Size()) > int64(len(chunk))-pos {
			break // cut by the chunk's end
		}
		if checkFraming(h, int64(len(chunk))-pos) != nil || h.BaseOffset != next ||
			h.NextOffset() > seg.Range.End || record.ComputeCRC(chunk[pos:pos+int64(h.Size())]) != h.CRC {
			return nil
		}
		table = append(table, chunkBatch{pos: uint32(pos), rel: uint32(h.BaseOffset - seg.Range.Start)})
		pos += int64(h.Size())
		next = h.NextOffset()
	}
	if len(table) == 0 {
		return nil
	}
	return append(table, chunkBatch{pos: uint32(pos), rel: uint32(next - seg.Range.Start)})
}

// span is the part of the table to send for a read from relative offset
// rel of at most maxBytes: whole batches from the one holding rel, at
// least that one (KIP-74), from the entry first to the entry end (the
// byte range [first.pos, end.pos) of the chunk, and the offsets
// [first.rel, end.rel)). ok is false when no batch of the table holds rel.
func (t chunkBatches) span(rel uint32, maxBytes int) (first, end chunkBatch, ok bool) {
	if len(t) < 2 || rel < t[0].rel || rel >= t[len(t)-1].rel {
		return chunkBatch{}, chunkBatch{}, false
	}
	// The batch holding rel is the last one starting at or before it.
	i := sort.Search(len(t)-1, func(i int) bool { return t[i+1].rel > rel })
	j := i + 1
	for j < len(t)-1 && int64(t[j+1].pos)-int64(t[i].pos) <= int64(maxBytes) {
		j++
	}
	return t[i], t[j], true
}

// firstBatchIn is where the first batch start that idx knows of lies in
// [start, end) of a segment's .log object, and its relative base offset;
// ok is false when idx has none there. Position 0 always starts a batch.
func firstBatchIn(idx []offsetEntry, start, end int64) (pos int64, rel uint32, ok bool) {
	if start == 0 {
		return 0, 0, end > 0
	}
	i := sort.Search(len(idx), func(i int) bool { return int64(idx[i].pos) >= start })
	if i == len(idx) || int64(idx[i].pos) >= end {
		return 0, 0, false
	}
	return int64(idx[i].pos), idx[i].rel, true
}
