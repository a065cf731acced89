package log

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/strata-broker/strata/internal/record"
)

// TODO(lead): fold into record.ValidPrefix / record.ComputeCRC when they land.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Where the v2 header keeps its CRC, and where the CRC-covered bytes begin.
const (
	crcFieldOffset = 17
	crcDataOffset  = 21
)

// batchCRCValid reports whether b, exactly one whole batch, carries the
// CRC-32C of its bytes from the attributes field to the end.
func batchCRCValid(b []byte) bool {
	if len(b) < record.HeaderSize {
		return false
	}
	want := binary.BigEndian.Uint32(b[crcFieldOffset:])
	return crc32.Checksum(b[crcDataOffset:], castagnoli) == want
}
