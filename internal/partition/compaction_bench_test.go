package partition

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/clock"
)

// BenchmarkClean measures one cleaning pass over 8 MiB of 1 KiB records
// in 1 MiB segments, in MB/s of log read. "dedupe" writes 200 keys over
// and over (almost every record goes); "unique" writes every key once, so
// the pass keeps every batch and costs what copying the log costs: the
// peer that "dedupe" is read against in the same run.
func BenchmarkClean(b *testing.B) {
	for _, keys := range []struct {
		name string
		n    int
	}{{"dedupe", 200}, {"unique", 1 << 30}} {
		b.Run(keys.name, func(b *testing.B) {
			const records, valueBytes = 8 << 10, 1000
			batches := make([][]byte, records/4)
			for i := range batches {
				ks := make([]string, 4)
				for j := range ks {
					ks[j] = fmt.Sprintf("key-%09d", (i*4+j)%keys.n)
				}
				batches[i] = batch(b, spec{keys: ks, valueBytes: valueBytes, seq: int32(i)})
			}
			cm := NewCleanerMap(128 << 20)
			var logBytes int64
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				o := testOptions(b.TempDir(), clock.Real{})
				compacted(&o)
				o.Config.SegmentBytes = 1 << 20
				p := openAt(b, o)
				for _, bt := range batches {
					mustAppend(b, p, append([]byte(nil), bt...), AcksLeader)
				}
				// Synced, as acks=all or a flush leaves it: the pass's own
				// sync is then a no-op and the timer sees cleaning only.
				if err := p.log.Roll(); err != nil {
					b.Fatal(err)
				}
				if err := p.log.Sync(); err != nil {
					b.Fatal(err)
				}
				logBytes = p.SizeBytes()
				now := time.Now().UnixMilli()
				d, err := p.PlanCleaning(now)
				if err != nil || !d.Clean {
					b.Fatalf("plan %+v, %v", d, err)
				}
				b.StartTimer()
				if _, err := p.Clean(d, cm, now, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				p.Close()
				b.StartTimer()
			}
			b.SetBytes(logBytes)
		})
	}
}
