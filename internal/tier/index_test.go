package tier

import (
	"math"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// TestIndexBuilderRefusesWhatOverflowsAU32Field: a remote segment's index
// holds relative offsets and positions in u32s (Kafka's format): a batch
// whose last offset is exactly MaxUint32 past the upload's start, or that
// ends the upload at exactly MaxUint32 bytes, still fits; one more does not.
func TestIndexBuilderRefusesWhatOverflowsAU32Field(t *testing.T) {
	const start = base.Offset(5)
	for _, tc := range []struct {
		name      string
		lastDelta int32 // of a batch at start+MaxUint32-9
		sizeSoFar int64 // bytes of the upload before the batch
		fits      bool
	}{
		{"last offset at the bound", 9, 0, true},
		{"last offset past the bound", 10, 0, false},
		{"size at the bound", 9, math.MaxUint32 - 100, true},
		{"size past the bound", 9, math.MaxUint32 - 99, false},
	} {
		b := newIndexBuilder(start)
		b.next, b.sizeBytes = start+math.MaxUint32-9, tc.sizeSoFar
		h := record.Header{BaseOffset: b.next, LastOffsetDelta: tc.lastDelta, Length: 100 - record.LogOverhead}
		if err := b.add(h); (err == nil) != tc.fits {
			t.Errorf("%s: add = %v, want fits %v", tc.name, err, tc.fits)
		}
	}
}
