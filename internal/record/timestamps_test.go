package record

import (
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// stampedBatch holds five records at offsets 100..104 with timestamp
// deltas 0, 10, 5, 20, 20 (producers may write them out of order), its
// max timestamp base+20 unless maxTs says otherwise.
func stampedBatch(t *testing.T, codec Codec, attrs int16, maxTs int64) []byte {
	t.Helper()
	rs := recs(5)
	for i, d := range []int64{0, 10, 5, 20, 20} {
		rs[i].TsDelta = d
	}
	return buildBatch(t, batchSpec{codec: codec, records: rs, mutate: func(b *kmsgBatch) {
		b.FirstOffset = 100
		b.Attributes |= attrs
		b.MaxTimestamp = maxTs
	}})
}

func TestFirstAtOrAfter(t *testing.T) {
	const ts0 = testBaseTs
	tests := []struct {
		name      string
		logAppend bool
		from      base.Offset
		ts        int64
		want      Stamped
		ok        bool
	}{
		{"the first record", false, 100, ts0, Stamped{100, ts0}, true},
		{"a record inside the batch, not the batch's max", false, 100, ts0 + 6, Stamped{101, ts0 + 10}, true},
		{"skips an earlier, smaller timestamp", false, 100, ts0 + 15, Stamped{103, ts0 + 20}, true},
		{"from inside the batch", false, 102, ts0, Stamped{102, ts0 + 5}, true},
		{"from past a match", false, 102, ts0 + 6, Stamped{103, ts0 + 20}, true},
		{"nothing that late", false, 100, ts0 + 21, Stamped{}, false},
		{"nothing at or after from", false, 105, ts0, Stamped{}, false},
		{"log append time: every record has the max", true, 100, ts0 + 6, Stamped{100, ts0 + 20}, true},
		{"log append time from inside", true, 103, ts0, Stamped{103, ts0 + 20}, true},
	}
	for _, codec := range allCodecs {
		for _, tt := range tests {
			var attrs int16
			if tt.logAppend {
				attrs = attrTimestampType
			}
			var r RecordReader
			got, ok, err := r.FirstAtOrAfter(stampedBatch(t, codec, attrs, ts0+20), tt.from, tt.ts)
			if err != nil || ok != tt.ok || got != tt.want {
				t.Errorf("%v, %s: FirstAtOrAfter(from %d, ts %+d) = %+v, %v, %v; want %+v, %v", codec, tt.name,
					tt.from, tt.ts-ts0, got, ok, err, tt.want, tt.ok)
			}
		}
	}
}

func TestOffsetOfMaxTimestamp(t *testing.T) {
	const ts0 = testBaseTs
	for _, codec := range allCodecs {
		var r RecordReader
		if o, ok, err := r.OffsetOfMaxTimestamp(stampedBatch(t, codec, 0, ts0+20)); err != nil || !ok || o != 103 {
			t.Errorf("%v create time: %d, %v, %v; want 103, the first record with the max", codec, o, ok, err)
		}
		if o, ok, err := r.OffsetOfMaxTimestamp(stampedBatch(t, codec, attrTimestampType, ts0+20)); err != nil || !ok || o != 104 {
			t.Errorf("%v log append time: %d, %v, %v; want 104, the last offset", codec, o, ok, err)
		}
		if o, ok, err := r.OffsetOfMaxTimestamp(stampedBatch(t, codec, 0, ts0+99)); err != nil || ok {
			t.Errorf("%v header max above every record: %d, %v, %v; want not found", codec, o, ok, err)
		}
	}
	var r RecordReader
	if _, ok, err := r.OffsetOfMaxTimestamp([]byte{1, 2, 3}); err == nil || ok {
		t.Errorf("a torn batch: ok %v, err %v", ok, err)
	}
	if _, ok, err := r.FirstAtOrAfter([]byte{1, 2, 3}, 0, 0); err == nil || ok {
		t.Errorf("FirstAtOrAfter of a torn batch: ok %v, err %v", ok, err)
	}
}

func TestRecordOfMaxTimestamp(t *testing.T) {
	const ts0 = testBaseTs
	for _, codec := range allCodecs {
		create := stampedBatch(t, codec, 0, ts0+20)
		appendTime := stampedBatch(t, codec, attrTimestampType, ts0+20)
		tests := []struct {
			name    string
			batches []byte
			maxTs   int64
			from    base.Offset
			want    base.Offset
			ok      bool
		}{
			{"the first record with the max", create, ts0 + 20, 100, 103, true},
			{"followed by another batch", append(slices.Clone(create), create...), ts0 + 20, 100, 103, true},
			{"log start past it: the next with the max", create, ts0 + 20, 104, 104, true},
			{"log append time: the last offset", appendTime, ts0 + 20, 100, 104, true},
			{"the batch changed since the search", create, ts0 + 21, 100, 0, false},
			{"a torn batch", create[:len(create)-1], ts0 + 20, 100, 0, false},
			{"a max no record carries", stampedBatch(t, codec, 0, ts0+99), ts0 + 99, 100, 0, false},
		}
		for _, tt := range tests {
			var r RecordReader
			if got, ok := r.RecordOfMaxTimestamp(tt.batches, tt.maxTs, tt.from); got != tt.want || ok != tt.ok {
				t.Errorf("%v, %s: RecordOfMaxTimestamp = %d, %v; want %d, %v", codec, tt.name, got, ok, tt.want, tt.ok)
			}
		}
	}
}

// TestRecordOfMaxTimestampBelowTheLogStart: when the first record with the
// max lies below from, the answer is the next record with the max at or
// after from, or from itself when none is; a batch whose records do not
// parse has no answer.
func TestRecordOfMaxTimestampBelowTheLogStart(t *testing.T) {
	batch := func(deltas ...int64) []byte {
		rs := recs(len(deltas))
		for i, d := range deltas {
			rs[i].TsDelta = d
		}
		return buildBatch(t, batchSpec{records: rs, mutate: func(b *kmsgBatch) {
			b.FirstOffset, b.MaxTimestamp = 100, testBaseTs+20
		}})
	}
	unreadable := buildBatch(t, batchSpec{codec: CodecGzip, records: recs(2), payload: []byte("not gzip"), compressed: true,
		mutate: func(b *kmsgBatch) { b.MaxTimestamp = testBaseTs + 20 }})
	tests := []struct {
		name    string
		batches []byte
		from    base.Offset
		want    base.Offset
		ok      bool
	}{
		{"the max again after from", batch(0, 20, 5, 10, 20), 102, 104, true},
		{"no max at or after from", batch(0, 20, 5, 10, 5), 102, 102, true},
		{"records that do not parse", unreadable, 100, 0, false},
	}
	for _, tt := range tests {
		var r RecordReader
		if got, ok := r.RecordOfMaxTimestamp(tt.batches, testBaseTs+20, tt.from); got != tt.want || ok != tt.ok {
			t.Errorf("%s: RecordOfMaxTimestamp = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
