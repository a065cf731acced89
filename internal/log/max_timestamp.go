package log

import (
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/vfs"
)

// MaxTimestampFrom is ListOffsets -3 over the batches holding offsets at
// or after from (the partition's log start): the largest batch max
// timestamp among them, and the base offset of the first batch carrying it,
// or from if that batch starts below from. Segments from from on answer
// from memory; when from is inside a segment whose max-timestamp batch
// lies wholly below it (DeleteRecords moved the log start there), that
// segment's batches from from are read.
func (l *Log) MaxTimestampFrom(from base.Offset) (base.Stamp, error) {
	l.lifecycle.RLock()
	defer l.lifecycle.RUnlock()
	l.mu.Lock()
	var best base.Stamp
	var scan *segmentScan
	for _, s := range l.mu.segs {
		switch {
		case s.dataEnd <= from || !s.hasMaxTs:
		case s.baseOffset >= from || s.maxTsOffset >= from:
			best = best.Later(base.Stamp{Ts: s.maxTs, Offset: s.maxTsOffset, Ok: true})
		default: // from is inside s, past the batch s's max came from
			scan = &segmentScan{f: s.file, pos: int64(s.offsetIndex.lookup(s.rel(from))), limit: s.sizeBytes}
		}
	}
	l.mu.Unlock()
	if scan == nil {
		return best, nil
	}
	found, err := scan.maxTimestampFrom(from)
	if err != nil {
		return base.Stamp{}, err
	}
	return best.Later(found), nil
}

// segmentScan is a segment file's batches in [pos, limit), pos a batch
// start; the bytes below limit do not change while lifecycle is held.
type segmentScan struct {
	f          vfs.File
	pos, limit int64
}

// maxTimestampFrom is the max timestamp of the batches that end after
// from, and the first one's offset (no lower than from).
func (s segmentScan) maxTimestampFrom(from base.Offset) (base.Stamp, error) {
	r := &batchReader{f: s.f, size: s.limit} // a window per pread, not a header
	var scratch [record.HeaderSize]byte
	var best base.Stamp
	for pos := s.pos; pos < s.limit; {
		h, err := readHeaderAt(r, pos, s.limit, scratch[:])
		if err != nil {
			return base.Stamp{}, err
		}
		if h.NextOffset() > from {
			best = best.Later(base.Stamp{Ts: h.MaxTimestamp, Offset: max(h.BaseOffset, from), Ok: true})
		}
		pos += int64(h.Size())
	}
	return best, nil
}
