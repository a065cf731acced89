package record

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// testRecord is what a test puts in a batch; nil Key/Value mean null.
type testRecord struct {
	Key, Value []byte
	Headers    []kmsg.Header
	TsDelta    int64
}

func recs(n int) []testRecord {
	out := make([]testRecord, n)
	for i := range out {
		out[i] = testRecord{
			Key:     []byte{byte('a' + i%26)},
			Value:   []byte("value-" + string(rune('0'+i%10))),
			TsDelta: int64(i),
		}
	}
	return out
}

// encodeRecords encodes records with offset delta = index, as producers do.
func encodeRecords(rs []testRecord) []byte {
	var out []byte
	for i, r := range rs {
		kr := kmsg.Record{
			TimestampDelta64: r.TsDelta,
			OffsetDelta:      int32(i),
			Key:              r.Key,
			Value:            r.Value,
			Headers:          r.Headers,
		}
		// Length is the body size: encode once with length 0 (one varint
		// byte) to learn it.
		kr.Length = int32(len(kr.AppendTo(nil)) - 1)
		out = kr.AppendTo(out)
	}
	return out
}

// batchSpec describes a batch; the zero value of each field is filled in.
type batchSpec struct {
	codec      Codec
	records    []testRecord
	payload    []byte // overrides records' encoding when set
	compressed bool   // payload is already compressed with codec
	mutate     func(*kmsg.RecordBatch)
	noCRC      bool
}

const testBaseTs = int64(1_700_000_000_000)

func buildBatch(t fataler, s batchSpec) []byte {
	t.Helper()
	payload := s.payload
	if payload == nil {
		payload = encodeRecords(s.records)
	}
	if !s.compressed && s.codec != CodecNone {
		var err error
		if payload, err = Compress(s.codec, payload, nil); err != nil {
			t.Fatal(err)
		}
	}
	n := int32(len(s.records))
	kb := kmsg.RecordBatch{
		Magic:           2,
		Attributes:      int16(s.codec),
		LastOffsetDelta: n - 1,
		FirstTimestamp:  testBaseTs,
		MaxTimestamp:    testBaseTs + int64(max(n-1, 0)),
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		NumRecords:      n,
		Records:         payload,
	}
	kb.Length = int32(HeaderSize - LogOverhead + len(payload))
	if s.mutate != nil {
		s.mutate(&kb)
	}
	b := kb.AppendTo(nil)
	if !s.noCRC && len(b) >= HeaderSize {
		WriteCRC(b)
	}
	return b
}

func mustCode(t *testing.T, err error, code int16) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v (%T), want *Error with code %d", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code %d (%v), want %d", e.Code, e, code)
	}
}

var allCodecs = []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

type kmsgBatch = kmsg.RecordBatch

// fataler is what helpers need of *testing.T, *testing.F and *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}
