package record

import (
	"encoding/binary"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
)

// Layout of the RecordBatch v2 header (all big-endian). The CRC covers
// everything from the attributes field to the end of the batch; the base
// offset, length and partition leader epoch are outside it, so they can be
// rewritten in place without recomputing the CRC.
const (
	offBaseOffset           = 0
	offLength               = 8
	offPartitionLeaderEpoch = 12
	offMagic                = 16
	offCRC                  = 17
	offAttributes           = 21
	offLastOffsetDelta      = 23
	offBaseTimestamp        = 27
	offMaxTimestamp         = 35
	offProducerID           = 43
	offProducerEpoch        = 51
	offBaseSequence         = 53
	offNumRecords           = 57

	// HeaderSize is the size of a v2 batch header, up to and including the
	// record count.
	HeaderSize = 61
	// LogOverhead is the part of the header that the length field does not
	// count: the base offset and the length itself.
	LogOverhead = 12
)

// Attribute bits.
const (
	attrCompressionMask = 0x07
	attrTimestampType   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
)

// Codec is a batch compression codec, as numbered on the wire.
type Codec int8

const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

// Header is the decoded fixed header of a RecordBatch v2.
type Header struct {
	BaseOffset           base.Offset
	Length               int32 // bytes after the length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// ErrShortHeader means fewer than HeaderSize bytes were given.
var ErrShortHeader = fmt.Errorf("record: batch header needs %d bytes", HeaderSize)

// ParseHeader decodes the fixed header at the start of b. It checks only that
// the bytes are there; Validate checks the rest.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, ErrShortHeader
	}
	be := binary.BigEndian
	return Header{
		BaseOffset:           base.Offset(be.Uint64(b[offBaseOffset:])),
		Length:               int32(be.Uint32(b[offLength:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[offPartitionLeaderEpoch:])),
		Magic:                int8(b[offMagic]),
		CRC:                  be.Uint32(b[offCRC:]),
		Attributes:           int16(be.Uint16(b[offAttributes:])),
		LastOffsetDelta:      int32(be.Uint32(b[offLastOffsetDelta:])),
		BaseTimestamp:        int64(be.Uint64(b[offBaseTimestamp:])),
		MaxTimestamp:         int64(be.Uint64(b[offMaxTimestamp:])),
		ProducerID:           int64(be.Uint64(b[offProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[offProducerEpoch:])),
		BaseSequence:         int32(be.Uint32(b[offBaseSequence:])),
		NumRecords:           int32(be.Uint32(b[offNumRecords:])),
	}, nil
}

// Size is the whole batch's size on disk and on the wire.
func (h Header) Size() int { return int(h.Length) + LogOverhead }

// LastOffset is the offset of the batch's last record.
func (h Header) LastOffset() base.Offset { return h.BaseOffset + base.Offset(h.LastOffsetDelta) }

// NextOffset is one past the batch's last record.
func (h Header) NextOffset() base.Offset { return h.LastOffset() + 1 }

// Codec is the batch's compression codec.
func (h Header) Codec() Codec { return Codec(h.Attributes & attrCompressionMask) }

// LogAppendTime reports whether the batch's timestamps are broker-assigned.
func (h Header) LogAppendTime() bool { return h.Attributes&attrTimestampType != 0 }

// Transactional reports whether the batch belongs to a transaction.
func (h Header) Transactional() bool { return h.Attributes&attrTransactional != 0 }

// Control reports whether the batch holds a control record (a transaction marker).
func (h Header) Control() bool { return h.Attributes&attrControl != 0 }

// Idempotent reports whether the batch carries a producer id.
func (h Header) Idempotent() bool { return h.ProducerID >= 0 }

// SetBaseOffset rewrites the base offset of the batch at the start of b.
// The base offset is outside the CRC, so the CRC stays valid.
func SetBaseOffset(b []byte, o base.Offset) {
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(o))
}

// SetPartitionLeaderEpoch rewrites the leader epoch of the batch at the start
// of b. The epoch is outside the CRC.
func SetPartitionLeaderEpoch(b []byte, e base.Epoch) {
	binary.BigEndian.PutUint32(b[offPartitionLeaderEpoch:], uint32(e))
}
