package record

import (
	"encoding/binary"
	"math"
	"sync"
)

// scratchBufs holds decompression buffers for Recompress, so that a steady
// stream of batches reuses them.
var scratchBufs = sync.Pool{New: func() any { return new([]byte) }}

// scratchKeepBytes caps what the pool keeps: one huge batch should not pin
// its buffer for ever.
const scratchKeepBytes = 8 << 20

// Recompress appends to dst a copy of batch b (one whole, validated batch)
// whose records are encoded with codec, for topics whose compression.type is
// not "producer". Header fields other than attributes' codec bits, length
// and CRC are kept. The records are parsed on the way, so a compressed batch
// that Validate could not look inside is checked here. The result may be
// larger than max.message.bytes; the caller checks, as Kafka does after
// re-compression. dst must not overlap b.
func Recompress(b []byte, codec Codec, dst []byte) ([]byte, error) {
	return RecompressLevel(b, codec, DefaultLevel(codec), dst)
}

// RecompressLevel is Recompress at a compression level of codec (see
// CompressLevel): the topic's compression.gzip.level, compression.lz4.level
// or compression.zstd.level.
func RecompressLevel(b []byte, codec Codec, level int, dst []byte) ([]byte, error) {
	h, err := frame(b)
	if err != nil {
		return nil, err
	}
	if codec < CodecNone || codec > CodecZstd {
		panic("record: Recompress to unknown codec")
	}
	bufp := scratchBufs.Get().(*[]byte)
	defer putScratch(bufp)
	raw, err := Decompress(h.Codec(), b[HeaderSize:], (*bufp)[:0])
	if err != nil {
		return nil, err
	}
	*bufp = raw
	if err := checkRecordCount(h, raw); err != nil {
		return nil, err
	}
	start := len(dst)
	out := append(dst, b[:HeaderSize]...)
	if out, err = CompressLevel(codec, level, raw, out); err != nil {
		return nil, err
	}
	if err := finishHeader(out[start:], h, codec); err != nil {
		return nil, err
	}
	return out, nil
}

func putScratch(bufp *[]byte) {
	if cap(*bufp) > scratchKeepBytes {
		return
	}
	scratchBufs.Put(bufp)
}

// checkRecordCount parses every record of an uncompressed payload and checks
// their number against the header. Offset gaps are allowed: compacted
// batches have them.
func checkRecordCount(h Header, raw []byte) error {
	var n int32
	for len(raw) > 0 {
		_, rest, err := parseRecord(raw)
		if err != nil {
			return err
		}
		raw = rest
		n++
	}
	if n != h.NumRecords {
		return invalid("batch claims %d records, holds %d", h.NumRecords, n)
	}
	return nil
}

// finishHeader sets the codec, length and CRC of a rebuilt batch.
func finishHeader(batch []byte, h Header, codec Codec) error {
	size := len(batch) - LogOverhead
	if size > math.MaxInt32 {
		return newError(CodeMessageTooLarge, "recompressed batch of %d bytes", len(batch))
	}
	attrs := uint16(h.Attributes)&^attrCompressionMask | uint16(codec)
	binary.BigEndian.PutUint16(batch[offAttributes:], attrs)
	binary.BigEndian.PutUint32(batch[offLength:], uint32(size))
	WriteCRC(batch)
	return nil
}
