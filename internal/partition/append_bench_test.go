package partition

import (
	"encoding/binary"
	"testing"

	"github.com/strata-broker/strata/internal/record"
)

// baseSequenceAt is where a batch header holds its base sequence.
const baseSequenceAt = 53

// BenchmarkAppendIdempotent appends 16-record batches of 1 KiB values of
// one idempotent producer with acks=1 (no sync): the partition's share of
// the produce path, producer-state check and update included.
func BenchmarkAppendIdempotent(b *testing.B) {
	e := newEnv(b, func(o *Options) { o.Config.SegmentBytes = 1 << 30 })
	p := e.open(b)
	defer p.Close()
	template := batch(b, spec{records: 16, valueBytes: 1024, pid: 1})
	buf := make([]byte, len(template))
	b.SetBytes(int64(len(template)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		copy(buf, template)
		binary.BigEndian.PutUint32(buf[baseSequenceAt:], uint32(i*16))
		record.WriteCRC(buf)
		if _, _, err := p.Append(buf, AcksLeader); err != nil {
			b.Fatal(err)
		}
	}
}
