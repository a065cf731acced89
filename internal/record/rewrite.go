package record

import "encoding/binary"

// SetLogAppendTime marks the batch at the start of b as LogAppendTime with
// the broker's append time tsMs, in place, and rewrites the CRC. As Kafka
// does for v2, only the attribute bit and MaxTimestamp change: records keep
// their deltas and consumers read every record's timestamp as MaxTimestamp,
// so nothing needs decompressing. b must hold one whole batch.
func SetLogAppendTime(b []byte, tsMs int64) {
	attrs := binary.BigEndian.Uint16(b[offAttributes:])
	binary.BigEndian.PutUint16(b[offAttributes:], attrs|attrTimestampType)
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(tsMs))
	WriteCRC(b)
}
