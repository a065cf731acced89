package record

import (
	"encoding/binary"
	"math"
)

// This file holds what a batch rewriter outside this package (the log
// cleaner) needs: walking records of a payload it decompressed itself,
// encoding records and headers, and the KIP-534 delete horizon.

// attrDeleteHorizon marks a batch whose base timestamp holds the time (ms)
// after which its tombstones may be removed (KIP-534). Records still carry
// their own timestamps as base + delta.
const attrDeleteHorizon = 0x40

// ParseRecord decodes the record at the start of p, an uncompressed payload,
// and returns the bytes after it. Errors are *Error with INVALID_RECORD.
// The record aliases p.
func ParseRecord(p []byte) (Record, []byte, error) {
	return parseRecord(p)
}

// AppendRecord appends r in record v2 form to dst, with r's own attributes,
// timestamp delta, offset delta, key, value and headers (copied encoded, so
// nothing is allocated beyond dst's growth). A caller rebasing timestamps
// sets r.TimestampDelta first.
func AppendRecord(dst []byte, r *Record) []byte {
	size := 1 + varintLen(r.TimestampDelta) + varintLen(int64(r.OffsetDelta)) +
		nullableLen(r.Key) + nullableLen(r.Value) +
		varintLen(int64(r.NumHeaders)) + len(r.rawHeaders)
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendNullable(dst, r.Key)
	dst = appendNullable(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(r.NumHeaders))
	return append(dst, r.rawHeaders...)
}

func varintLen(v int64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutVarint(buf[:], v)
}

func nullableLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendNullable(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// AppendHeader appends h as a 61-byte v2 batch header. Length and CRC are
// written as h holds them; FinishBatch fixes both once the records follow.
func AppendHeader(dst []byte, h Header) []byte {
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(h.BaseOffset))
	dst = be.AppendUint32(dst, uint32(h.Length))
	dst = be.AppendUint32(dst, uint32(h.PartitionLeaderEpoch))
	dst = append(dst, byte(h.Magic))
	dst = be.AppendUint32(dst, h.CRC)
	dst = be.AppendUint16(dst, uint16(h.Attributes))
	dst = be.AppendUint32(dst, uint32(h.LastOffsetDelta))
	dst = be.AppendUint64(dst, uint64(h.BaseTimestamp))
	dst = be.AppendUint64(dst, uint64(h.MaxTimestamp))
	dst = be.AppendUint64(dst, uint64(h.ProducerID))
	dst = be.AppendUint16(dst, uint16(h.ProducerEpoch))
	dst = be.AppendUint32(dst, uint32(h.BaseSequence))
	return be.AppendUint32(dst, uint32(h.NumRecords))
}

// FinishBatch sets the length field and CRC of b, one whole batch whose
// header and records are in place. It fails with MESSAGE_TOO_LARGE when b
// cannot be framed by an int32 length.
func FinishBatch(b []byte) error {
	if len(b) < HeaderSize {
		panic("record: FinishBatch on fewer bytes than a header")
	}
	size := len(b) - LogOverhead
	if size > math.MaxInt32 {
		return newError(CodeMessageTooLarge, "batch of %d bytes", len(b))
	}
	binary.BigEndian.PutUint32(b[offLength:], uint32(size))
	WriteCRC(b)
	return nil
}

// DeleteHorizon returns the batch's delete horizon (KIP-534), in ms, if it
// has one.
func (h Header) DeleteHorizon() (ms int64, ok bool) {
	if h.Attributes&attrDeleteHorizon == 0 {
		return 0, false
	}
	return h.BaseTimestamp, true
}

// WithDeleteHorizon returns h marked with delete horizon ms. The base
// timestamp becomes ms, so the caller must re-encode every record's
// timestamp delta against it.
func (h Header) WithDeleteHorizon(ms int64) Header {
	h.Attributes |= attrDeleteHorizon
	h.BaseTimestamp = ms
	return h
}

// WithoutDeleteHorizon returns h with no delete horizon; the base timestamp
// is left for the caller to set.
func (h Header) WithoutDeleteHorizon() Header {
	h.Attributes &^= attrDeleteHorizon
	return h
}

// WithCodec returns h with its compression codec set to c.
func (h Header) WithCodec(c Codec) Header {
	h.Attributes = h.Attributes&^attrCompressionMask | int16(c)
	return h
}
