package record

import (
	"encoding/binary"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

func TestHeaderDerivedFields(t *testing.T) {
	tests := []struct {
		name       string
		h          Header
		last, next base.Offset
		idempotent bool
		horizon    int64
		hasHorizon bool
	}{
		{"one record", Header{BaseOffset: 7, ProducerID: -1}, 7, 8, false, 0, false},
		{"span of five", Header{BaseOffset: 10, LastOffsetDelta: 4, ProducerID: 3}, 14, 15, true, 0, false},
		{"producer id zero", Header{ProducerID: 0}, 0, 1, true, 0, false},
		{"delete horizon", Header{Attributes: attrDeleteHorizon, BaseTimestamp: 1234, ProducerID: -1}, 0, 1, false, 1234, true},
		{"base timestamp without a horizon", Header{BaseTimestamp: 1234, ProducerID: -1}, 0, 1, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h
			if h.LastOffset() != tt.last || h.NextOffset() != tt.next || h.Idempotent() != tt.idempotent {
				t.Errorf("last %d next %d idempotent %v", h.LastOffset(), h.NextOffset(), h.Idempotent())
			}
			if ms, ok := h.DeleteHorizon(); ms != tt.horizon || ok != tt.hasHorizon {
				t.Errorf("DeleteHorizon = %d, %v", ms, ok)
			}
		})
	}
}

// TestFinishBatchFramesAHeaderAlone: a batch of no records (what
// compaction may leave) is framed like any other.
func TestFinishBatchFramesAHeaderAlone(t *testing.T) {
	b := buildBatch(t, batchSpec{records: nil, mutate: func(kb *kmsgBatch) { kb.LastOffsetDelta = 2 }})
	binary.BigEndian.PutUint32(b[offLength:], 0)
	if err := FinishBatch(b); err != nil {
		t.Fatal(err)
	}
	if n, err := ValidPrefix(b); n != HeaderSize || err != nil {
		t.Fatalf("ValidPrefix = %d, %v", n, err)
	}
}
