package record

import "github.com/strata-broker/strata/internal/base"

// Batches walks a concatenation of batches (a produce request's records, a
// segment) without allocating. It checks only framing: each length must be
// at least a header and within the bytes present. Validate or ValidPrefix
// check the rest.
type Batches struct {
	b   []byte
	off int // bytes of whole batches returned so far
	err error
}

// SplitBatches returns an iterator over the batches in b.
func SplitBatches(b []byte) Batches { return Batches{b: b} }

// Next returns the next batch's bytes and header. It returns false at the
// end of b, or at bytes that do not frame a batch (then Err is set).
func (it *Batches) Next() ([]byte, Header, bool) {
	if it.err != nil || it.off == len(it.b) {
		return nil, Header{}, false
	}
	rest := it.b[it.off:]
	n, err := frameLen(rest)
	if err != nil {
		it.err = err
		return nil, Header{}, false
	}
	batch := rest[:n:n] // capped so an append by the caller cannot clobber the next batch
	h, _ := ParseHeader(batch)
	it.off += n
	return batch, h, true
}

// Err is the error that stopped the walk early, nil if b ended cleanly.
func (it *Batches) Err() error { return it.err }

// Offset is the byte length of the whole batches returned so far: on error,
// where the bad bytes start.
func (it *Batches) Offset() int { return it.off }

// frameLen returns the size of the batch at the start of b, trusting its
// length field only as far as the bytes present.
func frameLen(b []byte) (int, error) {
	if len(b) > offMagic && b[offMagic] != 2 {
		if err := checkMagic(b); err != nil {
			return 0, err
		}
	}
	if len(b) < HeaderSize {
		return 0, corrupt("%d trailing bytes are shorter than a batch header", len(b))
	}
	h, _ := ParseHeader(b)
	size := int64(h.Length) + LogOverhead
	switch {
	case size < HeaderSize:
		return 0, corrupt("length field %d is shorter than a header", h.Length)
	case size > int64(len(b)):
		return 0, corrupt("batch of %d bytes truncated to %d", size, len(b))
	}
	return int(size), nil
}

// ValidPrefix returns the byte length of the longest prefix of b made of
// whole batches that are intact: framed, magic 2, CRC matching, header
// fields consistent, and base offsets not going backwards. Log recovery
// truncates a segment there. err says why the walk stopped early (an
// *Error), nil when all of b is valid.
func ValidPrefix(b []byte) (n int, err error) {
	it := SplitBatches(b)
	next := base.Offset(0)
	for {
		batch, h, ok := it.Next()
		if !ok {
			return it.Offset(), it.Err()
		}
		if err := checkStored(batch, h, next); err != nil {
			return it.Offset() - len(batch), err
		}
		next = h.NextOffset()
	}
}

// checkStored checks a batch as written to a log. Unlike producer input,
// compaction may have left fewer records than the offset span, even none.
func checkStored(batch []byte, h Header, next base.Offset) error {
	switch {
	case h.Magic != 2:
		return corrupt("unknown magic %d", h.Magic)
	case ComputeCRC(batch) != h.CRC:
		return corrupt("CRC mismatch at base offset %d", h.BaseOffset)
	case h.Codec() > CodecZstd:
		return corrupt("unknown compression codec %d", h.Codec())
	case h.LastOffsetDelta < 0 || h.NumRecords < 0 || int64(h.NumRecords) > int64(h.LastOffsetDelta)+1:
		return corrupt("%d records in an offset span of %d", h.NumRecords, h.LastOffsetDelta)
	case h.BaseOffset < next:
		return corrupt("base offset %d goes back before %d", h.BaseOffset, next)
	case h.LastOffset() < h.BaseOffset:
		return corrupt("offsets overflow at base offset %d", h.BaseOffset)
	}
	return nil
}
