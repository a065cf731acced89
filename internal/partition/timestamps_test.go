package partition

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// TestTimestampAnswersNameTheRecord: ListOffsets by timestamp and -3 (max
// timestamp) answer the record inside its batch, with its own timestamp,
// as Kafka does: a batch's base offset is not enough when its records
// carry different timestamps.
func TestTimestampAnswersNameTheRecord(t *testing.T) {
	p := newEnv(t).open(t)
	ts0 := testStart.UnixMilli()
	mustAppend(t, p, batch(t, spec{}), AcksAll)                                             // offset 0 at ts0
	mustAppend(t, p, batch(t, spec{records: 4, tsDeltas: []int64{5, 20, 10, 20}}), AcksAll) // offsets 1..4
	if o, ts, ok := p.OffsetForTimestamp(ts0 + 6); !ok || o != 2 || ts != ts0+20 {
		t.Errorf("OffsetForTimestamp(+6) = %d, %+d, %v; want offset 2 at +20", o, ts-ts0, ok)
	}
	if o, ts, ok := p.OffsetForTimestamp(ts0 + 1); !ok || o != 1 || ts != ts0+5 {
		t.Errorf("OffsetForTimestamp(+1) = %d, %+d, %v; want offset 1 at +5", o, ts-ts0, ok)
	}
	if got, err := p.MaxTimestamp(); err != nil || got != (base.Stamp{Ts: ts0 + 20, Offset: 2, Ok: true}) {
		t.Errorf("MaxTimestamp = %+v, %v; want +20 at offset 2, the first record carrying it", got, err)
	}
	// The log start inside the batch, past the first record with the max.
	if _, err := p.DeleteRecords(3); err != nil {
		t.Fatal(err)
	}
	if got, err := p.MaxTimestamp(); err != nil || got != (base.Stamp{Ts: ts0 + 20, Offset: 4, Ok: true}) {
		t.Errorf("MaxTimestamp from log start 3 = %+v, %v; want +20 at offset 4", got, err)
	}
	if o, ts, ok := p.OffsetForTimestamp(ts0 + 6); !ok || o != 3 || ts != ts0+10 {
		t.Errorf("OffsetForTimestamp(+6) from log start 3 = %d, %+d, %v; want offset 3 at +10", o, ts-ts0, ok)
	}
	if o, ts, ok := p.OffsetForTimestamp(ts0 + 11); !ok || o != 4 || ts != ts0+20 {
		t.Errorf("OffsetForTimestamp(+11) from log start 3 = %d, %+d, %v; want offset 4 at +20", o, ts-ts0, ok)
	}
}
