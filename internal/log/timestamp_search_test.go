package log

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// stampedBatch encodes one batch at baseOffset whose records carry the
// timestamps ts, in order (a producer may write them out of order).
func stampedBatch(baseOffset base.Offset, ts ...int64) []byte {
	var records []byte
	maxTs := ts[0]
	for i, t := range ts {
		r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: t - ts[0], Value: []byte{byte(i)}}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
		maxTs = max(maxTs, t)
	}
	b := kmsg.RecordBatch{
		FirstOffset: int64(baseOffset), Magic: 2, LastOffsetDelta: int32(len(ts) - 1),
		FirstTimestamp: ts[0], MaxTimestamp: maxTs,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(ts)), Records: records,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-record.LogOverhead))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// TestOffsetForTimestampFindsTheRecord: the answer is the first record
// whose timestamp reaches the target, inside its batch, with its own
// timestamp (Kafka's searchForTimestamp), and never below from.
func TestOffsetForTimestampFindsTheRecord(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	// Offsets 0..4 in one batch, 5..7 in the next segment's batch.
	for _, b := range [][]byte{stampedBatch(0, 100, 110, 105, 120, 120), stampedBatch(5, 130, 125, 140)} {
		if err := l.Append(b); err != nil {
			t.Fatal(err)
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		ts     int64
		from   base.Offset
		want   base.Offset
		wantTs int64
		ok     bool
	}{
		{100, 0, 0, 100, true},
		{101, 0, 1, 110, true}, // inside the batch, not its base
		{111, 0, 3, 120, true}, // past a smaller, later timestamp
		{121, 0, 5, 130, true}, // the next segment's batch
		{126, 0, 5, 130, true}, // its first record already reaches it
		{131, 0, 7, 140, true}, // its last record
		{141, 0, 0, 0, false},  // nothing that late
		{100, 2, 2, 105, true}, // from inside the batch
		{111, 4, 4, 120, true}, // from at the match's neighbour
		{121, 6, 6, 125, true}, // from past the batch's first match
		{126, 6, 7, 140, true}, // from's record is too early: the next one
	}
	for _, tt := range tests {
		got, gotTs, ok := l.OffsetForTimestamp(tt.ts, tt.from)
		if ok != tt.ok || ok && (got != tt.want || gotTs != tt.wantTs) {
			t.Errorf("OffsetForTimestamp(%d, from %d) = %d, %d, %v; want %d, %d, %v", tt.ts, tt.from, got, gotTs, ok, tt.want, tt.wantTs, tt.ok)
		}
	}
}

// TestOffsetForTimestampSearchesOnPastABatchWithoutAMatch: a batch whose
// max timestamp reaches the target may hold no qualifying record at or
// after from (its max is below from); the search goes on to the next
// batch, in the same segment and in the next one. A closed log answers
// nothing.
func TestOffsetForTimestampSearchesOnPastABatchWithoutAMatch(t *testing.T) {
	for _, roll := range []bool{false, true} {
		l := mustOpen(t, testOptions(t))
		if err := l.Append(stampedBatch(0, 100, 130, 105)); err != nil { // max 130 at offset 1
			t.Fatal(err)
		}
		if roll {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Append(stampedBatch(3, 140)); err != nil {
			t.Fatal(err)
		}
		if got, ts, ok := l.OffsetForTimestamp(120, 2); !ok || got != 3 || ts != 140 {
			t.Errorf("roll %v: OffsetForTimestamp(120, from 2) = %d, %d, %v; want 3, 140, true", roll, got, ts, ok)
		}
		if got, ts, ok := l.OffsetForTimestamp(120, 0); !ok || got != 1 || ts != 130 {
			t.Errorf("roll %v: OffsetForTimestamp(120, from 0) = %d, %d, %v; want 1, 130, true", roll, got, ts, ok)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if got, _, ok := l.OffsetForTimestamp(120, 0); ok {
			t.Errorf("a closed log answered %d", got)
		}
	}
}
