package tier

import (
	"context"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// maxTimestampReadBytes is how much of the .log each GET of
// MaxTimestampFrom asks for.
const maxTimestampReadBytes = 1 << 20

// MaxTimestampFrom finds, among the batches of seg from the one holding
// from to the segment's end, the first batch carrying the largest max
// timestamp (ListOffsets -3 when the log start lies inside seg, so the
// segment's metadata MaxTimestampMs may belong to batches below it). It
// reads those batches, maxTimestampReadBytes per GET; ok is false only if
// there are none. A batch holding from is answered at from, not below it.
func (r *Reader) MaxTimestampFrom(ctx context.Context, seg remotemeta.RemoteSegment, from base.Offset) (ts int64, offset base.Offset, ok bool, err error) {
	for o := max(from, seg.Range.Start); o < seg.Range.End; {
		batches, err := r.Read(ctx, seg, o, maxTimestampReadBytes)
		if err != nil {
			return 0, 0, false, err
		}
		it := record.SplitBatches(batches)
		next := o
		for {
			_, h, more := it.Next()
			if !more {
				break
			}
			if !ok || h.MaxTimestamp > ts {
				ts, offset, ok = h.MaxTimestamp, max(h.BaseOffset, from), true
			}
			next = h.NextOffset()
		}
		if err := it.Err(); err != nil {
			return 0, 0, false, fmt.Errorf("tier: batches of %v from %d: %w", seg.ID, o, err)
		}
		if next <= o {
			return 0, 0, false, fmt.Errorf("tier: read of %v from %d returned no batch", seg.ID, o)
		}
		o = next
	}
	return ts, offset, ok, nil
}

// RecordOfMaxTimestamp reads the batch of seg that holds offset o, which a
// search found to carry the max timestamp ts, and returns the offset of the
// record that carries it, never below from (record.RecordReader.
// RecordOfMaxTimestamp); ok is false when the batch does not carry ts.
func (r *Reader) RecordOfMaxTimestamp(ctx context.Context, seg remotemeta.RemoteSegment, o base.Offset, ts int64, from base.Offset) (base.Offset, bool, error) {
	batches, err := r.Read(ctx, seg, o, 1)
	if err != nil {
		return 0, false, err
	}
	var rr record.RecordReader
	found, ok := rr.RecordOfMaxTimestamp(batches, ts, from)
	return found, ok, nil
}
