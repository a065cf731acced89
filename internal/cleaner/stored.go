package cleaner

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/record"
)

// ErrCorruptBatch wraps every failure to read a stored batch: bad framing,
// CRC, header fields or records. The cleaner must stop rather than write a
// fresh CRC over damaged bytes, which would hide the damage for good.
var ErrCorruptBatch = errors.New("cleaner: corrupt batch")

func corruptf(h record.Header, format string, args ...any) error {
	return fmt.Errorf("%w at base offset %d: %s", ErrCorruptBatch, h.BaseOffset, fmt.Sprintf(format, args...))
}

// parseStored checks one whole batch as a log segment holds it: exactly one
// v2 batch, CRC intact, header fields consistent. Compaction leaves offset
// gaps, so NumRecords may be anything up to the offset span, even zero.
func parseStored(batch []byte) (record.Header, error) {
	h, err := record.ParseHeader(batch)
	if err != nil {
		return record.Header{}, fmt.Errorf("%w: %v", ErrCorruptBatch, err)
	}
	switch {
	case h.Magic != 2:
		return h, corruptf(h, "magic %d", h.Magic)
	case int64(h.Length)+record.LogOverhead != int64(len(batch)):
		return h, corruptf(h, "length field %d for %d bytes", h.Length, len(batch))
	case record.ComputeCRC(batch) != h.CRC:
		return h, corruptf(h, "CRC mismatch")
	case h.Codec() > record.CodecZstd:
		return h, corruptf(h, "unknown codec %d", h.Codec())
	case h.BaseOffset < 0 || h.LastOffsetDelta < 0 || h.LastOffset() < h.BaseOffset:
		return h, corruptf(h, "offsets [%d, +%d]", h.BaseOffset, h.LastOffsetDelta)
	case h.NumRecords < 0 || int64(h.NumRecords) > int64(h.LastOffsetDelta)+1:
		return h, corruptf(h, "%d records in an offset span of %d", h.NumRecords, int64(h.LastOffsetDelta)+1)
	}
	return h, nil
}

// payload returns the batch's records uncompressed: the batch's own bytes
// when it is not compressed, else *buf refilled (and kept for reuse).
func payload(batch []byte, h record.Header, buf *[]byte) ([]byte, error) {
	p := batch[record.HeaderSize:]
	if h.Codec() == record.CodecNone {
		return p, nil
	}
	if h.NumRecords == 0 && len(p) == 0 {
		// An empty batch has no payload at all, whatever its
		// attributes; Kafka writes them uncompressed, but be lenient.
		return nil, nil
	}
	raw, err := record.Decompress(h.Codec(), p, (*buf)[:0])
	if err != nil {
		return nil, corruptf(h, "%v", err)
	}
	*buf = raw
	return raw, nil
}

// checkRecords parses every record of raw, the batch's uncompressed
// payload: their number must match the header, and offset deltas must
// strictly increase within [0, LastOffsetDelta] so that the records' offsets
// stay inside the batch and ascending. After it passes, record.ParseRecord
// on raw cannot fail.
func checkRecords(h record.Header, raw []byte) error {
	var n int32
	prev := int32(-1)
	for len(raw) > 0 {
		rec, rest, err := record.ParseRecord(raw)
		if err != nil {
			return corruptf(h, "record %d: %v", n, err)
		}
		if rec.OffsetDelta <= prev || rec.OffsetDelta > h.LastOffsetDelta {
			return corruptf(h, "record %d has offset delta %d after %d (last %d)", n, rec.OffsetDelta, prev, h.LastOffsetDelta)
		}
		prev = rec.OffsetDelta
		raw = rest
		n++
	}
	if n != h.NumRecords {
		return corruptf(h, "header claims %d records, payload holds %d", h.NumRecords, n)
	}
	return nil
}
