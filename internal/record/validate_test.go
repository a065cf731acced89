package record

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var testLimits = Limits{MaxBatchBytes: 1 << 20}

// TestCodesMatchKerr pins our code table to franz-go's, Kafka's own numbers.
func TestCodesMatchKerr(t *testing.T) {
	for code, want := range map[int16]*kerr.Error{
		CodeCorruptMessage:              kerr.CorruptMessage,
		CodeMessageTooLarge:             kerr.MessageTooLarge,
		CodeInvalidTimestamp:            kerr.InvalidTimestamp,
		CodeUnsupportedForMessageFormat: kerr.UnsupportedForMessageFormat,
		CodeInvalidRecord:               kerr.InvalidRecord,
	} {
		if code != want.Code || codeName(code) != want.Message {
			t.Errorf("code %d %s, kerr says %d %s", code, codeName(code), want.Code, want.Message)
		}
	}
}

func TestValidateAcceptsEveryCodec(t *testing.T) {
	for _, c := range allCodecs {
		b := buildBatch(t, batchSpec{codec: c, records: recs(5)})
		h, err := Validate(b, testLimits)
		if err != nil {
			t.Fatalf("codec %d: %v", c, err)
		}
		if h.NumRecords != 5 || h.Codec() != c || h.Size() != len(b) {
			t.Fatalf("codec %d: header %+v", c, h)
		}
	}
}

// record encodes one record by hand, for payloads kmsg would not produce.
func record(fields ...[]byte) []byte {
	var body []byte
	for _, f := range fields {
		body = append(body, f...)
	}
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

func vi(v int64) []byte { return binary.AppendVarint(nil, v) }

func TestValidateRejects(t *testing.T) {
	good := recs(3)
	setCRCField := func(b []byte) { binary.BigEndian.PutUint32(b[offCRC:], 0xdeadbeef) }
	tests := []struct {
		name  string
		batch func(t *testing.T) []byte
		lim   Limits
		code  int16
	}{
		{"shorter than header", func(t *testing.T) []byte {
			return buildBatch(t, batchSpec{records: good})[:HeaderSize-1]
		}, testLimits, CodeCorruptMessage},
		{"no magic byte", func(*testing.T) []byte { return make([]byte, 10) }, testLimits, CodeCorruptMessage},
		{"bytes up to the magic byte", func(*testing.T) []byte { return make([]byte, offMagic) }, testLimits, CodeCorruptMessage},
		{"magic 0", magic(0), testLimits, CodeUnsupportedForMessageFormat},
		{"magic 1", magic(1), testLimits, CodeUnsupportedForMessageFormat},
		{"magic 3", magic(3), testLimits, CodeCorruptMessage},
		{"length field too long", mutate(good, func(kb *kmsg.RecordBatch) { kb.Length++ }), testLimits, CodeCorruptMessage},
		{"length field too short", mutate(good, func(kb *kmsg.RecordBatch) { kb.Length-- }), testLimits, CodeCorruptMessage},
		{"larger than max", func(t *testing.T) []byte { return buildBatch(t, batchSpec{records: good}) }, Limits{MaxBatchBytes: 70}, CodeMessageTooLarge},
		{"bad CRC", func(t *testing.T) []byte {
			b := buildBatch(t, batchSpec{records: good})
			setCRCField(b)
			return b
		}, testLimits, CodeCorruptMessage},
		{"flipped payload bit", func(t *testing.T) []byte {
			b := buildBatch(t, batchSpec{records: good})
			b[len(b)-1] ^= 1
			return b
		}, testLimits, CodeCorruptMessage},
		{"unknown codec", mutate(good, func(kb *kmsg.RecordBatch) { kb.Attributes |= 5 }), testLimits, CodeCorruptMessage},
		{"nonzero base offset", mutate(good, func(kb *kmsg.RecordBatch) { kb.FirstOffset = 7 }), testLimits, CodeInvalidRecord},
		{"control batch", mutate(good, func(kb *kmsg.RecordBatch) { kb.Attributes |= attrControl }), testLimits, CodeInvalidRecord},
		{"zero records", func(t *testing.T) []byte { return buildBatch(t, batchSpec{}) }, testLimits, CodeInvalidRecord},
		{"last offset delta off", mutate(good, func(kb *kmsg.RecordBatch) { kb.LastOffsetDelta = 5 }), testLimits, CodeInvalidRecord},
		{"producer id without sequence", mutate(good, func(kb *kmsg.RecordBatch) { kb.ProducerID = 9 }), testLimits, CodeInvalidRecord},
		{"producer id 0 without sequence", mutate(good, func(kb *kmsg.RecordBatch) { kb.ProducerID = 0 }), testLimits, CodeInvalidRecord},
		{"transactional without producer", mutate(good, func(kb *kmsg.RecordBatch) { kb.Attributes |= attrTransactional }), testLimits, CodeInvalidRecord},
		{"count above records", mutate(good, func(kb *kmsg.RecordBatch) { kb.NumRecords, kb.LastOffsetDelta = 4, 3 }), testLimits, CodeInvalidRecord},
		{"count below records", mutate(good, func(kb *kmsg.RecordBatch) { kb.NumRecords, kb.LastOffsetDelta = 2, 1 }), testLimits, CodeInvalidRecord},
		{"offset delta not index", payload(1, record([]byte{0}, vi(0), vi(3), vi(-1), vi(-1), vi(0))), testLimits, CodeInvalidRecord},
		{"trailing bytes", payload(1, append(record([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(0)), 0)), testLimits, CodeInvalidRecord},
		{"bytes past last header", payload(1, record([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(0), []byte{1})), testLimits, CodeInvalidRecord},
		{"record length overruns", payload(1, vi(100)), testLimits, CodeInvalidRecord},
		{"truncated varint", payload(1, []byte{0x80}), testLimits, CodeInvalidRecord},
		{"key length -2", payload(1, record([]byte{0}, vi(0), vi(0), vi(-2), vi(-1), vi(0))), testLimits, CodeInvalidRecord},
		{"negative header count", payload(1, record([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(-1))), testLimits, CodeInvalidRecord},
		{"null header key", payload(1, record([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(1), vi(-1), vi(-1))), testLimits, CodeInvalidRecord},
		{"offset delta beyond int32", payload(1, record([]byte{0}, vi(0), vi(1<<40), vi(-1), vi(-1), vi(0))), testLimits, CodeInvalidRecord},
		{"record timestamp too old", func(t *testing.T) []byte { return buildBatch(t, batchSpec{records: good}) },
			Limits{MaxBatchBytes: 1 << 20, Timestamps: TimestampRange{Check: true, StartMs: testBaseTs + 1, EndMs: testBaseTs + 100}},
			CodeInvalidTimestamp},
		{"compressed max timestamp too new", func(t *testing.T) []byte { return buildBatch(t, batchSpec{codec: CodecZstd, records: good}) },
			Limits{MaxBatchBytes: 1 << 20, Timestamps: TimestampRange{Check: true, StartMs: testBaseTs, EndMs: testBaseTs + 2}},
			CodeInvalidTimestamp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Validate(tt.batch(t), tt.lim)
			mustCode(t, err, tt.code)
		})
	}
}

func magic(m int8) func(*testing.T) []byte {
	return mutate(recs(1), func(kb *kmsg.RecordBatch) { kb.Magic = m })
}

func mutate(rs []testRecord, f func(*kmsg.RecordBatch)) func(*testing.T) []byte {
	return func(t *testing.T) []byte { return buildBatch(t, batchSpec{records: rs, mutate: f}) }
}

// payload builds an uncompressed batch claiming n records around raw bytes.
func payload(n int, raw []byte) func(*testing.T) []byte {
	return func(t *testing.T) []byte {
		return buildBatch(t, batchSpec{records: make([]testRecord, n), payload: raw})
	}
}

// TestValidateAcceptsAtTheBounds: the smallest batch, one at exactly the
// size limit, and producer id 0 (Kafka's first) with sequence 0.
func TestValidateAcceptsAtTheBounds(t *testing.T) {
	one := buildBatch(t, batchSpec{records: recs(1)})
	idempotent := func(kb *kmsg.RecordBatch) { kb.ProducerID, kb.ProducerEpoch, kb.FirstSequence = 0, 0, 0 }
	tests := []struct {
		name  string
		batch []byte
		lim   Limits
	}{
		{"one record", one, testLimits},
		{"exactly max bytes", one, Limits{MaxBatchBytes: len(one)}},
		{"producer id 0, sequence 0", buildBatch(t, batchSpec{records: recs(2), mutate: idempotent}), testLimits},
		{"transactional, producer id 0", buildBatch(t, batchSpec{records: recs(2), mutate: func(kb *kmsg.RecordBatch) {
			idempotent(kb)
			kb.Attributes |= attrTransactional
		}}), testLimits},
	}
	for _, tt := range tests {
		if _, err := Validate(tt.batch, tt.lim); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// A compressed batch refused for its timestamps whose records then fail
// to parse is refused without naming records: the walk did not see them all.
func TestValidateCompressedTimestampRefusalWithBadRecords(t *testing.T) {
	raw := append(encodeRecords(recs(3)), 0x7e)
	b := buildBatch(t, batchSpec{codec: CodecZstd, records: recs(3), payload: raw})
	lim := Limits{MaxBatchBytes: 1 << 20, Timestamps: TimestampRange{Check: true, StartMs: testBaseTs + 1, EndMs: testBaseTs + 100}}
	_, err := Validate(b, lim)
	mustCode(t, err, CodeInvalidTimestamp)
	if recs := err.(*Error).Records; len(recs) != 0 {
		t.Fatalf("records %v named from a batch that does not parse", recs)
	}
}

func TestValidateTimestampsIgnoredForLogAppendTime(t *testing.T) {
	b := buildBatch(t, batchSpec{records: recs(3), mutate: func(kb *kmsg.RecordBatch) { kb.Attributes |= attrTimestampType }})
	lim := Limits{MaxBatchBytes: 1 << 20, Timestamps: TimestampRange{Check: true, StartMs: 0, EndMs: 1}}
	if _, err := Validate(b, lim); err != nil {
		t.Fatal(err)
	}
}

func TestValidateDoesNotAllocate(t *testing.T) {
	b := buildBatch(t, batchSpec{records: recs(20)})
	if n := testing.AllocsPerRun(100, func() { _, _ = Validate(b, testLimits) }); n != 0 {
		t.Fatalf("Validate allocates %v times per batch", n)
	}
}

// max.message.bytes=0 refuses every batch, as in Kafka; a negative limit
// is a programmer error.
func TestValidateZeroAndNegativeLimit(t *testing.T) {
	b := buildBatch(t, batchSpec{records: recs(1)})
	var e *Error
	if _, err := Validate(b, Limits{}); !errors.As(err, &e) || e.Code != CodeMessageTooLarge {
		t.Fatalf("zero limit: %v, want MESSAGE_TOO_LARGE", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a negative limit was accepted")
		}
	}()
	_, _ = Validate(b, Limits{MaxBatchBytes: -1})
}

// A batch refused for its records' timestamps names each record outside
// the range (KIP-467), compressed or not: clients fail those records with
// INVALID_TIMESTAMP and the batch's others as collateral.
func TestValidateNamesRecordsOutsideTheTimestampRange(t *testing.T) {
	lim := Limits{MaxBatchBytes: 1 << 20, Timestamps: TimestampRange{Check: true, StartMs: testBaseTs + 1, EndMs: testBaseTs + 4}}
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		_, err := Validate(buildBatch(t, batchSpec{codec: codec, records: recs(5)}), lim)
		mustCode(t, err, CodeInvalidTimestamp)
		var got []int32
		for _, r := range err.(*Error).Records {
			if r.Msg == "" {
				t.Fatalf("codec %v: record %d named without a reason", codec, r.Index)
			}
			got = append(got, r.Index)
		}
		if !slices.Equal(got, []int32{0, 4}) {
			t.Fatalf("codec %v: records %v named, want [0 4] (timestamps base+0..4, range [base+1, base+4))", codec, got)
		}
	}
}
