package tier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// ErrNotReadable: a read asked a remote segment for an offset outside its
// range, or a segment that is not COPY_FINISHED.
var ErrNotReadable = errors.New("tier: not readable from this remote segment")

// Reader serves reads of COPY_FINISHED remote segments. Indexes are
// fetched once and kept in an LRU bounded by IndexCacheBytes (the bytes of
// the index objects); the .log is read through Chunks, the on-disk chunk
// cache with read-ahead, or with ranged GETs of the bytes asked when
// Chunks is nil. Everything read from the bucket or the cache is checked
// before use (index layout and order, batch framing, offsets and CRCs): a
// corrupt object is an error wrapping ErrCorruptObject that names its key,
// and is never served. Safe for concurrent use; Store is required; Close
// stops the read-ahead.
type Reader struct {
	Store           objstore.Store
	IndexCacheBytes int64
	Chunks          *ChunkCache // nil: no chunk cache, no read-ahead
	FetchQuota      *ByteRate   // remote.log.manager.fetch.max.bytes.per.second; nil is unlimited
	Stats           *Stats      // counts reads, failures and bytes; nil counts nothing

	mu struct {
		sync.Mutex
		cache *indexCache // created on first use
		// indexCacheBytes is the bound SetIndexCacheBytes set; 0 until then
		// (IndexCacheBytes applies).
		indexCacheBytes int64
	}
}

// SetIndexCacheBytes bounds the remote index cache anew
// (remote.log.index.file.cache.total.size.bytes, dynamic as in Kafka): a
// smaller bound evicts the least recently used indexes at once.
func (r *Reader) SetIndexCacheBytes(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.indexCacheBytes = n
	if r.mu.cache != nil {
		r.mu.cache.resize(n)
	}
}

// Read returns whole batches of seg from the one holding from, up to
// maxBytes in total but at least that first batch (KIP-74), all inside
// seg.Range. It reads the .log once, plus the offset index on a cache
// miss.
func (r *Reader) Read(ctx context.Context, seg remotemeta.RemoteSegment, from base.Offset, maxBytes int) (batches []byte, err error) {
	defer func() { r.Stats.fetched(seg.TP, len(batches), err) }()
	if seg.State != remotemeta.CopyFinished || !seg.Range.Contains(from) {
		return nil, fmt.Errorf("%w: offset %d of %v segment %v %v", ErrNotReadable, from, seg.State, seg.ID, seg.Range)
	}
	idx, err := r.offsetIndex(ctx, seg)
	if err != nil {
		return nil, err
	}
	err = r.readVerified(seg, func() (hit bool, err error) {
		batches, hit, err = r.readBatches(ctx, seg, idx, from, maxBytes)
		return hit, err
	})
	if err != nil {
		return nil, err
	}
	return batches, nil
}

// readBatches is Read after the offset index lookup; hit reports whether
// any byte came from the chunk cache.
func (r *Reader) readBatches(ctx context.Context, seg remotemeta.RemoteSegment, idx []offsetEntry, from base.Offset, maxBytes int) (_ []byte, hit bool, err error) {
	key := SegmentKey(seg, SuffixLog)
	pos, nextPos := lookupOffset(idx, uint32(from-seg.Range.Start), seg.SizeBytes)
	// Index entries are batch starts, so the batch holding from ends by
	// nextPos: this range holds it whole (KIP-74: at least the first batch)
	// and maxBytes after it. An index entry inside a batch (a corrupt index)
	// can cut it; wholeBatches then fails its framing check.
	chunk, hit, err := r.readLog(ctx, seg, pos, min(seg.SizeBytes, nextPos+int64(max(maxBytes, 0)))-pos)
	if err != nil {
		return nil, hit, err
	}
	expect := expectedAt(idx, pos, seg)
	off := 0
	for {
		h, err := parseRemoteHeader(key, chunk[off:], seg.SizeBytes-pos-int64(off), pos+int64(off))
		if err != nil {
			return nil, hit, err
		}
		if h.BaseOffset != expect {
			return nil, hit, corruptf(key, "batch at position %d has base offset %d, want %d", pos+int64(off), h.BaseOffset, expect)
		}
		if h.NextOffset() > from {
			break
		}
		off += h.Size()
		expect = h.NextOffset()
	}
	batches, err := wholeBatches(key, chunk[off:], pos+int64(off), expect, seg, maxBytes)
	if err != nil {
		return nil, hit, err
	}
	r.noteLogRead(seg, pos, int64(off+len(batches)))
	return batches, hit, nil
}

// expectedAt is the base offset of the batch at pos, an index position (or 0).
func expectedAt(idx []offsetEntry, pos int64, seg remotemeta.RemoteSegment) base.Offset {
	i := sort.Search(len(idx), func(i int) bool { return int64(idx[i].pos) >= pos })
	if i < len(idx) && int64(idx[i].pos) == pos {
		return seg.Range.Start + base.Offset(idx[i].rel)
	}
	return seg.Range.Start
}

// wholeBatches returns the prefix of b (read at position pos of key) made
// of whole, valid batches within maxBytes, at least the first. Every
// returned batch is checked: framing, magic, CRC, offsets contiguous from
// next and inside seg.Range.
func wholeBatches(key string, b []byte, pos int64, next base.Offset, seg remotemeta.RemoteSegment, maxBytes int) ([]byte, error) {
	n := 0
	for n < len(b) {
		h, err := record.ParseHeader(b[n:])
		if err != nil {
			break // a header cut by the GET
		}
		if h.Length >= record.HeaderSize-record.LogOverhead && n > 0 &&
			(int64(h.Size()) > int64(len(b)-n) || n+h.Size() > maxBytes) {
			break // cut by the GET or by maxBytes: the caller asks again from here
		}
		if err := checkFraming(h, int64(len(b)-n)); err != nil {
			return nil, corruptf(key, "batch at position %d: %v", pos+int64(n), err)
		}
		batch := b[n : n+h.Size()]
		switch {
		case h.BaseOffset != next || h.NextOffset() > seg.Range.End:
			return nil, corruptf(key, "batch at position %d holds [%d, %d), want from %d inside %v",
				pos+int64(n), h.BaseOffset, h.NextOffset(), next, seg.Range)
		case record.ComputeCRC(batch) != h.CRC:
			return nil, corruptf(key, "CRC mismatch in the batch at offset %d", h.BaseOffset)
		}
		n += len(batch)
		next = h.NextOffset()
	}
	if n == 0 {
		return nil, corruptf(key, "no whole batch at position %d", pos)
	}
	return b[:n:n], nil
}

// parseRemoteHeader reads the batch header at the start of b, found at
// position pos of key with avail bytes of the object from there.
func parseRemoteHeader(key string, b []byte, avail, pos int64) (record.Header, error) {
	h, err := record.ParseHeader(b)
	if err != nil {
		return h, corruptf(key, "no batch header at position %d", pos)
	}
	if err := checkFraming(h, avail); err != nil {
		return h, corruptf(key, "batch at position %d: %v", pos, err)
	}
	return h, nil
}

// OffsetForTimestamp finds, in seg, the first record at or after offset
// from whose timestamp is >= ts (ListOffsets by timestamp, as Kafka's
// searchForTimestamp) and returns its offset and timestamp, through the
// cached time and offset indexes and one ranged GET. ok is false when seg
// has no such record.
func (r *Reader) OffsetForTimestamp(ctx context.Context, seg remotemeta.RemoteSegment, ts int64, from base.Offset) (offset base.Offset, foundTs int64, ok bool, err error) {
	if seg.State != remotemeta.CopyFinished {
		return 0, 0, false, fmt.Errorf("%w: %v segment %v", ErrNotReadable, seg.State, seg.ID)
	}
	if seg.MaxTimestampMs < ts {
		return 0, 0, false, nil
	}
	tidx, err := r.timeIndex(ctx, seg)
	if err != nil {
		return 0, 0, false, err
	}
	oidx, err := r.offsetIndex(ctx, seg)
	if err != nil {
		return 0, 0, false, err
	}
	// Batches up to entry i-1 are all below ts; the batch of entry i
	// reaches it, and ends before the next offset index entry after it.
	i := sort.Search(len(tidx), func(i int) bool { return tidx[i].ts >= ts })
	var startRel uint32
	if i > 0 {
		startRel = tidx[i-1].rel
	}
	startPos, _ := lookupOffset(oidx, startRel, seg.SizeBytes)
	endPos := seg.SizeBytes
	// A from inside the segment may pass every match of the batch that
	// reaches ts first: then read on to the segment's end.
	if i < len(tidx) && from <= seg.Range.Start {
		_, endPos = lookupOffset(oidx, tidx[i].rel, seg.SizeBytes)
	}
	key := SegmentKey(seg, SuffixLog)
	var batches []byte
	err = r.readVerified(seg, func() (hit bool, err error) {
		chunk, hit, err := r.readLog(ctx, seg, startPos, endPos-startPos)
		if err != nil {
			return hit, err
		}
		batches, err = wholeBatches(key, chunk, startPos, expectedAt(oidx, startPos, seg), seg, len(chunk))
		return hit, err
	})
	if err != nil {
		return 0, 0, false, err
	}
	var rr record.RecordReader
	for it := record.SplitBatches(batches); ; {
		batch, h, more := it.Next()
		if !more {
			break
		}
		if h.MaxTimestamp < ts || h.NextOffset() <= from {
			continue
		}
		found, ok, err := rr.FirstAtOrAfter(batch, from, ts)
		if err != nil {
			return 0, 0, false, corruptf(key, "batch at offset %d: %v", h.BaseOffset, err)
		}
		if ok {
			return found.Offset, found.Timestamp, true, nil
		}
	}
	if from > seg.Range.Start {
		return 0, 0, false, nil // every match is below from
	}
	return 0, 0, false, corruptf(key, "metadata says max timestamp %d >= %d, but no record in [%d, %d) reaches it",
		seg.MaxTimestampMs, ts, startPos, endPos)
}

func (r *Reader) offsetIndex(ctx context.Context, seg remotemeta.RemoteSegment) ([]offsetEntry, error) {
	v, err := r.index(ctx, seg, SuffixIndex, offsetEntryBytes, func(key string, b []byte) (any, error) {
		return decodeOffsetIndex(key, b, seg)
	})
	if err != nil {
		return nil, err
	}
	return v.([]offsetEntry), nil
}

func (r *Reader) timeIndex(ctx context.Context, seg remotemeta.RemoteSegment) ([]timeEntry, error) {
	v, err := r.index(ctx, seg, SuffixTimeIndex, timeEntryBytes, func(key string, b []byte) (any, error) {
		return decodeTimeIndex(key, b, seg)
	})
	if err != nil {
		return nil, err
	}
	return v.([]timeEntry), nil
}

// index returns the decoded index suffix of seg, from the cache or the
// bucket. Two readers missing at once both fetch it; the objects are
// immutable, so either answer is right.
func (r *Reader) index(ctx context.Context, seg remotemeta.RemoteSegment, suffix Suffix, entryBytes int64,
	decode func(key string, b []byte) (any, error),
) (any, error) {
	ck := indexCacheKey{id: seg.ID, suffix: suffix}
	r.mu.Lock()
	if r.mu.cache == nil {
		r.mu.cache = newIndexCache(cmp.Or(r.mu.indexCacheBytes, r.IndexCacheBytes))
	}
	v, ok := r.mu.cache.get(ck)
	r.mu.Unlock()
	if ok {
		return v, nil
	}
	key := SegmentKey(seg, suffix)
	rc, size, err := r.Store.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("tier: get %s: %w", key, err)
	}
	defer rc.Close()
	if limit := maxIndexBytes(seg.SizeBytes, entryBytes); size > limit {
		return nil, corruptf(key, "index of %d bytes for a segment of %d bytes", size, seg.SizeBytes)
	}
	b, err := readFull(rc, size)
	if err != nil {
		return nil, fmt.Errorf("tier: read %s: %w", key, err)
	}
	v, err = decode(key, b)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.mu.cache.put(ck, v, int64(len(b)))
	r.mu.Unlock()
	return v, nil
}

// maxIndexBytes bounds an index object of a segment of segmentBytes whose
// entries are entryBytes each: each index has at most one entry a batch (an
// offset index none for the first), and a batch is at least a header long.
// A bigger object is corrupt, and is not read into memory.
func maxIndexBytes(segmentBytes, entryBytes int64) int64 {
	return segmentBytes / record.HeaderSize * entryBytes
}

// readFull reads exactly n bytes (io.ErrUnexpectedEOF if fewer come).
func readFull(rc io.Reader, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(rc, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}
