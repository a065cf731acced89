package log

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/record"
)

// fataler is what the helpers need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

var testEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// makeBatch encodes a v2 batch at baseOffset with n records of valueBytes each,
// all stamped ts (ms), with a valid CRC.
func makeBatch(baseOffset base.Offset, n, valueBytes int, ts int64) []byte {
	var records []byte
	value := make([]byte, valueBytes)
	for i := range value {
		value[i] = byte(int(baseOffset) + i)
	}
	for i := 0; i < n; i++ {
		r := kmsg.Record{OffsetDelta: int32(i), Value: value}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1) // Length 0 encodes as one varint byte
		records = r.AppendTo(records)
	}
	b := kmsg.RecordBatch{
		FirstOffset:     int64(baseOffset),
		Magic:           2,
		LastOffsetDelta: int32(n - 1),
		FirstTimestamp:  ts,
		MaxTimestamp:    ts,
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      int32(n),
		Records:         records,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-record.LogOverhead))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func testOptions(t testing.TB) Options {
	o := DefaultOptions(t.TempDir(), clock.NewManual(testEpoch))
	o.SegmentBytes = 1 << 20
	o.IndexIntervalBytes = 256
	return o
}

func mustOpen(t fataler, o Options) *Log {
	t.Helper()
	l, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// appendN appends count batches of recs records each, timestamps from ts0
// upward, and returns the batches.
func appendN(t fataler, l *Log, count, recs, valueBytes int, ts0 int64) [][]byte {
	t.Helper()
	var out [][]byte
	for i := 0; i < count; i++ {
		b := makeBatch(l.End(), recs, valueBytes, ts0+int64(i))
		if err := l.Append(b); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		out = append(out, b)
	}
	return out
}

// readAll reads every batch from Start() to End(), segment after segment.
// A read may find nothing below End() only past the last batch, in a gap:
// what it read must then be every byte of every segment.
func readAll(t fataler, l *Log) []byte {
	t.Helper()
	var out []byte
	for o := l.Start(); o < l.End(); {
		n := len(out)
		var err error
		out, err = l.Read(o, 1<<30, out)
		if err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
		if len(out) == n {
			var size int64
			for _, s := range l.Segments() {
				size += s.SizeBytes
			}
			if int64(len(out)) != size {
				t.Fatalf("Read(%d) returned nothing below End %d, with %d of %d bytes read", o, l.End(), len(out), size)
			}
			break
		}
		o = lastNext(t, out[n:])
	}
	return out
}

// lastNext is the next offset after the last batch in b.
func lastNext(t fataler, b []byte) base.Offset {
	t.Helper()
	var next base.Offset
	for off := 0; off < len(b); {
		h, err := record.ParseHeader(b[off:])
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		next = h.NextOffset()
		off += h.Size()
	}
	return next
}

func concat(bs [][]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// crash abandons l like a killed process: files are closed, nothing is
// synced or written, no clean-shutdown marker.
func (l *Log) crash() {
	l.lifecycle.Lock()
	defer l.lifecycle.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.mu.segs {
		_ = s.file.Close()
	}
	l.mu.closed = true
}

// stop ends l as a clean Close (which must succeed) or as a crash.
func (l *Log) stop(t fataler, clean bool) {
	t.Helper()
	if !clean {
		l.crash()
		return
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func segFile(o Options, b base.Offset, suffix string) string {
	return segmentPath(o.Dir, b, suffix)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, filepath.Base(e.Name()))
	}
	return out
}
