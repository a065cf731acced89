package record

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// mixedRecords covers null and empty keys and values, and headers.
func mixedRecords() []testRecord {
	return []testRecord{
		{Key: nil, Value: []byte("null key"), TsDelta: 0},
		{Key: []byte{}, Value: nil, TsDelta: 5},
		{Key: []byte("k"), Value: []byte{}, TsDelta: -3,
			Headers: []kmsg.Header{{Key: "h1", Value: []byte("v1")}, {Key: "", Value: nil}}},
		{Key: bytes.Repeat([]byte("x"), 300), Value: bytes.Repeat([]byte("y"), 70000), TsDelta: 1 << 40},
	}
}

func readAll(t *testing.T, b []byte) []testRecord {
	t.Helper()
	var r RecordReader
	if err := r.Reset(b); err != nil {
		t.Fatal(err)
	}
	var out []testRecord
	var hdrs []RecordHeader
	for rec, ok := r.Next(); ok; rec, ok = r.Next() {
		tr := testRecord{Key: rec.Key, Value: rec.Value, TsDelta: rec.TimestampDelta}
		if rec.OffsetDelta != int32(len(out)) {
			t.Fatalf("record %d: offset delta %d", len(out), rec.OffsetDelta)
		}
		hdrs = rec.AppendHeaders(hdrs[:0])
		for _, h := range hdrs {
			tr.Headers = append(tr.Headers, kmsg.Header{Key: string(h.Key), Value: h.Value})
		}
		out = append(out, tr)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func equalRecords(t *testing.T, got, want []testRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !sameBytes(g.Key, w.Key) || !sameBytes(g.Value, w.Value) || g.TsDelta != w.TsDelta || len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d: got %+v", i, g)
		}
		for j := range w.Headers {
			if g.Headers[j].Key != w.Headers[j].Key || !sameBytes(g.Headers[j].Value, w.Headers[j].Value) {
				t.Fatalf("record %d header %d: %+v", i, j, g.Headers[j])
			}
		}
	}
}

// sameBytes tells null (nil) from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestRecordReaderEveryCodec(t *testing.T) {
	want := mixedRecords()
	for _, c := range allCodecs {
		b := buildBatch(t, batchSpec{codec: c, records: want})
		equalRecords(t, readAll(t, b), want)
	}
}

func TestRecordReaderRejectsBadBatches(t *testing.T) {
	var r RecordReader
	mustCode(t, r.Reset(buildBatch(t, batchSpec{records: recs(1)})[:40]), CodeCorruptMessage)
	b := buildBatch(t, batchSpec{codec: CodecGzip, records: recs(3), payload: []byte("not gzip"), compressed: true})
	mustCode(t, r.Reset(b), CodeCorruptMessage)
	b = buildBatch(t, batchSpec{records: recs(3), mutate: func(kb *kmsg.RecordBatch) { kb.NumRecords = 4 }})
	if err := r.Reset(b); err != nil {
		t.Fatal(err)
	}
	for _, ok := r.Next(); ok; _, ok = r.Next() {
	}
	mustCode(t, r.Err(), CodeInvalidRecord)
}

func TestRecordReaderReusesBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	b := buildBatch(t, batchSpec{codec: CodecLZ4, records: recs(50)})
	var r RecordReader
	walk := func() {
		if err := r.Reset(b); err != nil {
			t.Fatal(err)
		}
		for _, ok := r.Next(); ok; _, ok = r.Next() {
		}
	}
	walk()
	if n := testing.AllocsPerRun(20, walk); n > 2 {
		t.Fatalf("%v allocations per batch", n)
	}
}

func TestRecompressEveryPair(t *testing.T) {
	want := mixedRecords()
	for _, from := range allCodecs {
		orig := buildBatch(t, batchSpec{codec: from, records: want, mutate: func(kb *kmsg.RecordBatch) {
			kb.Attributes |= attrTransactional
			kb.ProducerID, kb.ProducerEpoch, kb.FirstSequence = 11, 2, 40
		}})
		origH, _ := ParseHeader(orig)
		for _, to := range allCodecs {
			prefix := []byte("prefix")
			out, err := Recompress(orig, to, append([]byte(nil), prefix...))
			if err != nil {
				t.Fatalf("%s -> %s: %v", codecName(from), codecName(to), err)
			}
			b := out[len(prefix):]
			h, err := Validate(b, Limits{MaxBatchBytes: 1 << 30})
			if err != nil {
				t.Fatalf("%s -> %s: result invalid: %v", codecName(from), codecName(to), err)
			}
			origH.Attributes, origH.Length, origH.CRC = h.Attributes, h.Length, h.CRC
			if h != origH || h.Codec() != to || !h.Transactional() {
				t.Fatalf("%s -> %s: header %+v", codecName(from), codecName(to), h)
			}
			equalRecords(t, readAll(t, b), want)
		}
	}
}

func TestRecompressChecksRecordsValidateSkipped(t *testing.T) {
	b := buildBatch(t, batchSpec{codec: CodecZstd, records: recs(2), payload: []byte{0x80}})
	if _, err := Validate(b, testLimits); err != nil {
		t.Fatalf("Validate looked inside a compressed batch: %v", err)
	}
	_, err := Recompress(b, CodecNone, nil)
	mustCode(t, err, CodeInvalidRecord)
}

// TestRecordReaderStopsAtABadRecord: a record that does not parse ends the
// walk with INVALID_RECORD, and the reader stays ended.
func TestRecordReaderStopsAtABadRecord(t *testing.T) {
	payload := append(encodeRecords(recs(2)), 0x7e) // a third record's length overruns
	b := buildBatch(t, batchSpec{records: recs(3), payload: payload})
	var r RecordReader
	if err := r.Reset(b); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ok := r.Next(); ok; _, ok = r.Next() {
		if n++; n > 3 {
			t.Fatal("the walk does not end")
		}
	}
	if n != 2 {
		t.Fatalf("%d records before the bad one, want 2", n)
	}
	mustCode(t, r.Err(), CodeInvalidRecord)
	if _, ok := r.Next(); ok {
		t.Fatal("Next after an error returned a record")
	}
}

// TestAppendRecordRoundTrips: a parsed record appended again is the same
// bytes, headers included.
func TestAppendRecordRoundTrips(t *testing.T) {
	payload := encodeRecords(mixedRecords())
	var out []byte
	for rest := payload; len(rest) > 0; {
		rec, next, err := ParseRecord(rest)
		if err != nil {
			t.Fatal(err)
		}
		out = AppendRecord(out, &rec)
		rest = next
	}
	if !bytes.Equal(out, payload) {
		t.Fatalf("re-encoded records differ:\n% x\n% x", out, payload)
	}
}

// TestRecompressCountsRecords: Recompress refuses a batch whose payload
// holds fewer records than it claims, or a stray byte after the last.
func TestRecompressCountsRecords(t *testing.T) {
	for name, b := range map[string][]byte{
		"one record short": buildBatch(t, batchSpec{records: recs(3), mutate: func(kb *kmsgBatch) { kb.NumRecords = 4 }}),
		"a stray byte":     buildBatch(t, batchSpec{records: recs(2), payload: append(encodeRecords(recs(2)), 0)}),
	} {
		_, err := Recompress(b, CodecGzip, nil)
		if err == nil {
			t.Errorf("%s: recompressed", name)
			continue
		}
		mustCode(t, err, CodeInvalidRecord)
	}
}

func TestRecompressToAnUnknownCodecPanics(t *testing.T) {
	b := buildBatch(t, batchSpec{records: recs(1)})
	for _, c := range []Codec{-1, CodecZstd + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Recompress to codec %d did not panic", c)
				}
			}()
			_, _ = Recompress(b, c, nil)
		}()
	}
}

func TestRecordsErrorMessage(t *testing.T) {
	one := RecordsError(CodeInvalidRecord, []RecordError{{Index: 3, Msg: "no key"}})
	two := RecordsError(CodeInvalidRecord, []RecordError{{Index: 3, Msg: "no key"}, {Index: 5, Msg: "no key"}})
	if one.Msg != "record 3: no key" || two.Msg != "2 records refused; the first, record 3: no key" || len(two.Records) != 2 {
		t.Fatalf("messages %q, %q", one.Msg, two.Msg)
	}
}
