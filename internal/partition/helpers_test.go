package partition

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

var testStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// spec describes a producer batch; the zero value is one non-idempotent
// record of 16 bytes stamped with the test's clock start.
type spec struct {
	records    int
	valueBytes int
	tsMs       int64 // every record's timestamp; 0 means testStart
	pid        int64 // 0 means no producer id (-1 on the wire)
	epoch      int16
	seq        int32
	codec      record.Codec
	keys       []string // record i's key; nil keys record i "k<i>"
	tombstone  bool     // every record's value is null
	keyless    bool     // every record's key is null
	keylessAt  []int    // these records' keys are null
	// transactional sets the transactional bit (with pid set).
	transactional bool
	// noSeq sends base sequence -1 with the producer id, as a
	// coordinator's own batch has it.
	noSeq bool
	// tsDeltas, when set, is record i's timestamp delta from tsMs; the
	// batch's max timestamp follows.
	tsDeltas []int64
}

// batch encodes s as a producer sends it: base offset 0, CRC-32C set.
func batch(t testing.TB, s spec) []byte {
	t.Helper()
	n := max(s.records, len(s.keys), 1)
	vb := s.valueBytes
	if vb == 0 {
		vb = 16
	}
	ts := s.tsMs
	if ts == 0 {
		ts = testStart.UnixMilli()
	}
	var payload []byte
	for i := range n {
		value := make([]byte, vb)
		for j := range value {
			value[j] = byte(i*7 + j + int(s.seq))
		}
		r := kmsg.Record{OffsetDelta: int32(i), Key: []byte{byte('k'), byte(i)}, Value: value}
		if s.tsDeltas != nil {
			r.TimestampDelta64 = s.tsDeltas[i]
		}
		if s.keys != nil {
			r.Key = []byte(s.keys[i])
		}
		if s.tombstone {
			r.Value = nil
		}
		if s.keyless || slices.Contains(s.keylessAt, i) {
			r.Key = nil
		}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // Length 0 takes one varint byte
		payload = r.AppendTo(payload)
	}
	if s.codec != record.CodecNone {
		var err error
		if payload, err = record.Compress(s.codec, payload, nil); err != nil {
			t.Fatal(err)
		}
	}
	kb := kmsg.RecordBatch{
		Magic:           2,
		Attributes:      int16(s.codec),
		LastOffsetDelta: int32(n - 1),
		FirstTimestamp:  ts,
		MaxTimestamp:    ts + slices.Max(append([]int64{0}, s.tsDeltas...)),
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      int32(n),
		Records:         payload,
	}
	if s.pid != 0 {
		kb.ProducerID, kb.ProducerEpoch, kb.FirstSequence = s.pid, s.epoch, s.seq
		if s.noSeq {
			kb.FirstSequence = -1
		}
	}
	if s.transactional {
		kb.Attributes |= 0x10
	}
	out := kb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-record.LogOverhead))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func testOptions(dir string, clk clock.Clock) Options {
	return Options{
		Dir:         dir,
		TP:          base.TopicPartition{Topic: "t", Partition: 0},
		LeaderEpoch: 1,
		Clock:       clk,
		Config: Config{
			SegmentBytes:       1 << 20,
			IndexIntervalBytes: 256,
			SegmentIndexBytes:  10 << 20,
			MaxMessageBytes:    1 << 20,
		},
	}
}

// smallSegments makes every segment hold about a kilobyte.
func smallSegments(o *Options) { o.Config.SegmentBytes = 1024 }

type env struct {
	dir   string
	clock *clock.Manual
	opts  Options
}

func newEnv(t testing.TB, tweaks ...func(*Options)) *env {
	t.Helper()
	e := &env{dir: t.TempDir(), clock: clock.NewManual(testStart)}
	e.opts = testOptions(e.dir, e.clock)
	for _, f := range tweaks {
		f(&e.opts)
	}
	return e
}

func (e *env) open(t testing.TB) *Partition {
	t.Helper()
	return openAt(t, e.opts)
}

func openAt(t testing.TB, o Options) *Partition {
	t.Helper()
	p, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// crashCopy copies the partition's directory while it is open, as a crash
// would leave it if the page cache survived (no clean-shutdown marker, no
// close-time snapshot), and returns options for a Partition on the copy.
func (e *env) crashCopy(t testing.TB) Options {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		if de.IsDir() {
			continue
		}
		copyFile(t, filepath.Join(e.dir, de.Name()), filepath.Join(dst, de.Name()))
	}
	o := e.opts
	o.Dir = dst
	return o
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustAppend(t testing.TB, p *Partition, b []byte, acks Acks) AppendResult {
	t.Helper()
	res, wait, err := p.Append(b, acks)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if wait != nil {
		if err := wait(); err != nil {
			t.Fatalf("wait: %v", err)
		}
	}
	return res
}

// readAll returns the headers of every batch in [from, high watermark).
func readAll(t testing.TB, p *Partition, from base.Offset) []record.Header {
	t.Helper()
	var out []record.Header
	for {
		rr, err := p.Read(from, 4096, nil)
		if err != nil {
			t.Fatalf("Read(%d): %v", from, err)
		}
		if len(rr.Records) == 0 {
			return out
		}
		it := record.SplitBatches(rr.Records)
		for {
			_, h, ok := it.Next()
			if !ok {
				break
			}
			out = append(out, h)
			from = h.NextOffset()
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func wantCode(t testing.TB, err error, code int16) {
	t.Helper()
	var ce *producers.CodeError
	var re *record.Error
	switch {
	case errors.As(err, &ce) && ce.Code == code:
	case errors.As(err, &re) && re.Code == code:
	default:
		t.Fatalf("error %v (%T), want Kafka error code %d", err, err, code)
	}
}

func segmentBases(p *Partition) []base.Offset {
	var out []base.Offset
	for _, s := range p.log.Segments() {
		out = append(out, s.BaseOffset)
	}
	return out
}
