package record

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A marker batch is byte for byte what kmsg builds for Kafka's layout, and
// parses back.
func TestAppendEndTxnMarkerMatchesKafka(t *testing.T) {
	for _, m := range []EndTxnMarker{{Commit: true, CoordinatorEpoch: 7}, {Commit: false, CoordinatorEpoch: 0}} {
		got := AppendEndTxnMarker([]byte("prefix"), 42, 3, m, testBaseTs)
		if string(got[:6]) != "prefix" {
			t.Fatal("dst prefix overwritten")
		}
		got = got[6:]

		typ := kmsg.ControlRecordKeyTypeAbort
		if m.Commit {
			typ = kmsg.ControlRecordKeyTypeCommit
		}
		key := (&kmsg.ControlRecordKey{Version: 0, Type: typ}).AppendTo(nil)
		value := (&kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: m.CoordinatorEpoch}).AppendTo(nil)
		kr := kmsg.Record{Key: key, Value: value}
		kr.Length = int32(len(kr.AppendTo(nil)) - 1)
		kb := kmsg.RecordBatch{
			PartitionLeaderEpoch: -1,
			Magic:                2,
			Attributes:           attrTransactional | attrControl,
			FirstTimestamp:       testBaseTs,
			MaxTimestamp:         testBaseTs,
			ProducerID:           42,
			ProducerEpoch:        3,
			FirstSequence:        -1,
			NumRecords:           1,
			Records:              kr.AppendTo(nil),
		}
		kb.Length = int32(HeaderSize - LogOverhead + len(kb.Records))
		want := kb.AppendTo(nil)
		WriteCRC(want)
		if !bytes.Equal(got, want) {
			t.Fatalf("marker %v:\n got %x\nwant %x", m, got, want)
		}

		h, err := ParseHeader(got)
		if err != nil || !h.Control() || !h.Transactional() || h.Size() != len(got) || ComputeCRC(got) != h.CRC {
			t.Fatalf("header %+v, %v", h, err)
		}
		var rr RecordReader
		if err := rr.Reset(got); err != nil {
			t.Fatal(err)
		}
		rec, ok := rr.Next()
		if !ok {
			t.Fatal(rr.Err())
		}
		back, err := ParseEndTxnMarker(rec.Key, rec.Value)
		if err != nil || back != m {
			t.Fatalf("ParseEndTxnMarker = %v, %v; want %v", back, err, m)
		}
		if n, err := ValidPrefix(got); err != nil || n != len(got) {
			t.Fatalf("ValidPrefix = %d, %v", n, err)
		}
	}
}

func TestParseEndTxnMarkerRejects(t *testing.T) {
	okValue := []byte{0, 0, 0, 0, 0, 9}
	for _, tc := range []struct {
		name       string
		key, value []byte
	}{
		{"short key", []byte{0, 0, 0}, okValue},
		{"not a marker type", []byte{0, 0, 0, 2}, okValue},
		{"short value", []byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 9}},
		{"null value", []byte{0, 0, 0, 1}, nil},
	} {
		if _, err := ParseEndTxnMarker(tc.key, tc.value); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	// A later value version with more fields still yields the epoch.
	m, err := ParseEndTxnMarker([]byte{0, 0, 0, 1}, []byte{0, 1, 0, 0, 0, 9, 0xff})
	if err != nil || m != (EndTxnMarker{Commit: true, CoordinatorEpoch: 9}) {
		t.Fatalf("longer value: %v, %v", m, err)
	}
}

// A client may not send a control batch; a coordinator may send a
// producer's batch without sequence numbers, a client may not.
func TestValidateOrigins(t *testing.T) {
	marker := AppendEndTxnMarker(nil, 5, 0, EndTxnMarker{Commit: true}, testBaseTs)
	for _, lim := range []Limits{testLimits, {MaxBatchBytes: 1 << 20, FromCoordinator: true}} {
		if _, err := Validate(marker, lim); !isCode(err, CodeInvalidRecord) {
			t.Fatalf("control batch with %+v: %v, want INVALID_RECORD", lim, err)
		}
	}
	noSeq := buildBatch(t, batchSpec{records: recs(2), mutate: func(b *kmsg.RecordBatch) {
		b.ProducerID, b.ProducerEpoch, b.FirstSequence = 9, 1, -1
		b.Attributes |= attrTransactional
	}})
	if _, err := Validate(noSeq, testLimits); !isCode(err, CodeInvalidRecord) {
		t.Fatalf("client batch without sequence: %v, want INVALID_RECORD", err)
	}
	if _, err := Validate(noSeq, Limits{MaxBatchBytes: 1 << 20, FromCoordinator: true}); err != nil {
		t.Fatalf("coordinator batch without sequence: %v", err)
	}
}

func isCode(err error, code int16) bool {
	e, ok := err.(*Error)
	return ok && e.Code == code
}
