package record

import "github.com/strata-broker/strata/internal/base"

// Stamped is a record's offset and timestamp.
type Stamped struct {
	Offset    base.Offset
	Timestamp int64
}

// recordTimestamp is the timestamp Kafka gives rec of a batch with header
// h: the batch's max timestamp for LogAppendTime, else the record's own.
func recordTimestamp(h Header, rec Record) int64 {
	if h.LogAppendTime() {
		return h.MaxTimestamp
	}
	return h.BaseTimestamp + rec.TimestampDelta
}

// FirstAtOrAfter finds, in batch, the first record at or after offset from
// whose timestamp is at or after ts: what Kafka's ListOffsets by timestamp
// answers once it has found the batch (FileRecords.searchForTimestamp),
// the record's own offset and timestamp, not the batch's. ok is false when
// no record of batch qualifies. r is reset to batch.
func (r *RecordReader) FirstAtOrAfter(batch []byte, from base.Offset, ts int64) (Stamped, bool, error) {
	if err := r.Reset(batch); err != nil {
		return Stamped{}, false, err
	}
	h := r.Header()
	for rec, more := r.Next(); more; rec, more = r.Next() {
		o := h.BaseOffset + base.Offset(rec.OffsetDelta)
		if t := recordTimestamp(h, rec); o >= from && t >= ts {
			return Stamped{Offset: o, Timestamp: t}, true, nil
		}
	}
	return Stamped{}, false, r.Err()
}

// OffsetOfMaxTimestamp is Kafka's RecordBatch.offsetOfMaxTimestamp, which
// ListOffsets -3 answers (KIP-734, as fixed by KAFKA-16310): the last
// offset of a LogAppendTime batch, else the first record whose timestamp is
// the batch's max; ok is false when none is (a batch whose header lies).
// r is reset to batch.
func (r *RecordReader) OffsetOfMaxTimestamp(batch []byte) (base.Offset, bool, error) {
	if err := r.Reset(batch); err != nil {
		return 0, false, err
	}
	h := r.Header()
	if h.LogAppendTime() {
		return h.LastOffset(), true, nil
	}
	for rec, more := r.Next(); more; rec, more = r.Next() {
		if recordTimestamp(h, rec) == h.MaxTimestamp {
			return h.BaseOffset + base.Offset(rec.OffsetDelta), true, nil
		}
	}
	return 0, false, r.Err()
}

// RecordOfMaxTimestamp is where ListOffsets -3 points inside the first
// batch of batches, whose max timestamp a search found to be maxTs:
// OffsetOfMaxTimestamp, or, when that record is below from (a log start
// inside the batch), the first record at or after from carrying maxTs, or
// from itself. ok is false when the first batch does not carry maxTs (it
// changed since the search) or cannot be read.
func (r *RecordReader) RecordOfMaxTimestamp(batches []byte, maxTs int64, from base.Offset) (base.Offset, bool) {
	h, err := ParseHeader(batches)
	if err != nil || h.MaxTimestamp != maxTs || h.Size() > len(batches) {
		return 0, false
	}
	b := batches[:h.Size()]
	o, ok, err := r.OffsetOfMaxTimestamp(b)
	if err != nil || !ok {
		return 0, false
	}
	if o >= from {
		return o, true
	}
	if found, ok, err := r.FirstAtOrAfter(b, from, maxTs); err == nil && ok {
		return found.Offset, true
	}
	return from, true
}
