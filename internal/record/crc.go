package record

import (
	"encoding/binary"
	"hash/crc32"
)

// castagnoli is read-only after init; crc32 caches the table anyway.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ComputeCRC returns the CRC-32C of a whole batch: it covers the bytes from
// the attributes to the end, so base offset, length and leader epoch can be
// rewritten without touching it. b must hold at least a header.
func ComputeCRC(b []byte) uint32 {
	return crc32.Checksum(b[offAttributes:], castagnoli)
}

// WriteCRC stores ComputeCRC(b) in the batch's CRC field, after a rewrite of
// CRC-covered bytes.
func WriteCRC(b []byte) {
	binary.BigEndian.PutUint32(b[offCRC:], ComputeCRC(b))
}
