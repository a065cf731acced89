package log

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/record"
)

// benchBatch is a 16 KiB batch of 1 KiB records (16 records of 1000-byte
// values plus framing).
func benchBatch() []byte { return makeBatch(0, 16, 1000, 1) }

func BenchmarkAppend(b *testing.B) {
	o := DefaultOptions(b.TempDir(), clock.Real{})
	o.SegmentBytes = 64 << 20
	l := mustOpen(b, o)
	defer l.Close()
	batch := benchBatch()
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		record.SetBaseOffset(batch, l.End())
		if err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	o := DefaultOptions(b.TempDir(), clock.Real{})
	l := mustOpen(b, o)
	defer l.Close()
	batch := benchBatch()
	for i := 0; i < 4096; i++ { // 64 MiB
		record.SetBaseOffset(batch, l.End())
		if err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	end := l.End()
	buf := make([]byte, 0, 1<<20+len(batch))
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		from := base.Offset(int64(i*7919) % int64(end))
		out, err := l.Read(from, 1<<20, buf[:0])
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func TestAppendDoesNotAllocate(t *testing.T) {
	o := testOptions(t)
	o.SegmentBytes = 1 << 30
	o.IndexIntervalBytes = 1 << 30 // index slices grow amortized; keep them still here
	l := mustOpen(t, o)
	defer l.Close()
	batch := benchBatch()
	allocs := testing.AllocsPerRun(100, func() {
		record.SetBaseOffset(batch, l.End())
		if err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Append allocates %.1f times per call", allocs)
	}
}

// BenchmarkReadTail reads as a consumer at the tail does: a few small
// batches from past the last index entry.
func BenchmarkReadTail(b *testing.B) {
	o := DefaultOptions(b.TempDir(), clock.Real{})
	l := mustOpen(b, o)
	defer l.Close()
	batch := makeBatch(0, 1, 1000, 1)
	for range 1000 {
		record.SetBaseOffset(batch, l.End())
		if err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	end := l.End()
	buf := make([]byte, 0, 1<<20+len(batch))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := l.Read(end-1-base.Offset(i%8), 1<<20, buf[:0])
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}
