package partition

import (
	"errors"
	"fmt"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/log"
	"github.com/strata-broker/strata/internal/record"
)

// ReadResult is one fetch's worth of a partition.
type ReadResult struct {
	// Records are whole batches; the first may start before the offset
	// asked for (Kafka semantics: clients skip what they did not ask for).
	Records []byte
	Offsets Offsets
	// Buf is the caller's buffer with Records appended.
	Buf []byte
}

// Isolation is a fetch's isolation level: how far it may read.
type Isolation int8

const (
	// ReadUncommitted reads below the high watermark.
	ReadUncommitted Isolation = iota + 1
	// ReadCommitted reads below the last stable offset: no batch of an
	// open transaction is served. Aborted batches below it are served
	// with AbortedTxns, for the consumer to drop, as Kafka does.
	ReadCommitted
	// ReadLogEnd reads below the log end, past the high watermark: what a
	// leader serves a follower's fetch (Kafka's FetchIsolation.LOG_END),
	// never a client's.
	ReadLogEnd
)

// End is where a read at isolation iso stops (exclusive).
func (o Offsets) End(iso Isolation) base.Offset {
	switch iso {
	case ReadUncommitted:
		return o.HighWatermark
	case ReadCommitted:
		return o.LastStable
	case ReadLogEnd:
		return o.LogEnd
	}
	panic(fmt.Sprintf("partition: invalid isolation %d", iso))
}

// readableEnd is the highest offset a read at isolation iso may ask for
// (reading nothing there); past it is out of range: the high watermark
// for a client, whatever its isolation, the log end for a follower.
func (o Offsets) readableEnd(iso Isolation) base.Offset {
	if iso == ReadLogEnd {
		return o.LogEnd
	}
	return o.HighWatermark
}

// Read appends to buf up to maxBytes of whole batches starting at the batch
// holding from, never past the high watermark. At least one batch is
// returned when one exists at or after from, even past maxBytes (KIP-74).
// ReadResult.Records is the appended part only; Buf is buf with it
// appended (it may have moved), for reuse by the caller.
func (p *Partition) Read(from base.Offset, maxBytes int, buf []byte) (ReadResult, error) {
	return p.ReadIsolated(from, maxBytes, buf, ReadUncommitted)
}

// ReadIsolated is Read stopping where iso says (Offsets.End): with
// ReadCommitted, no batch starting at or after the last stable offset is
// returned, and a from in [LastStable, HighWatermark] reads nothing. An
// offset above the high watermark is out of range whatever iso is, except
// ReadLogEnd (a follower's fetch), for which one above the log end is.
func (p *Partition) ReadIsolated(from base.Offset, maxBytes int, buf []byte, iso Isolation) (ReadResult, error) {
	p.mu.Lock()
	off := p.offsetsLocked()
	closed := p.mu.closed
	p.mu.Unlock()
	if closed {
		return ReadResult{Offsets: off}, ErrClosed
	}
	if from < off.LogStart || from > off.readableEnd(iso) {
		return ReadResult{Offsets: off}, ErrOffsetOutOfRange
	}
	if from < off.LocalStart {
		return ReadResult{Offsets: off, Buf: buf}, ErrOffsetInRemote
	}
	end := off.End(iso)
	if from >= end {
		return ReadResult{Offsets: off, Buf: buf}, nil
	}
	out, err := p.log.Read(from, maxBytes, buf)
	if errors.Is(err, log.ErrOffsetOutOfRange) {
		return ReadResult{Offsets: off}, ErrOffsetOutOfRange
	}
	if err != nil {
		return ReadResult{Offsets: off}, err
	}
	out = trimAtOffset(out, len(buf), end)
	return ReadResult{Records: out[len(buf):], Offsets: off, Buf: out}, nil
}

// trimAtOffset drops the batches of b[from:] that start at or after end.
func trimAtOffset(b []byte, from int, end base.Offset) []byte {
	pos := from
	for pos < len(b) {
		h, err := record.ParseHeader(b[pos:])
		if err != nil || h.BaseOffset >= end || pos+h.Size() > len(b) {
			break
		}
		pos += h.Size()
	}
	return b[:pos]
}

// OffsetForTimestamp is the first record from the log start whose
// timestamp is at or after ts, its offset and timestamp, or ok=false when
// every record below the high watermark is older.
func (p *Partition) OffsetForTimestamp(ts int64) (base.Offset, int64, bool) {
	p.mu.Lock()
	from := p.mu.logStart
	p.mu.Unlock()
	o, foundTs, ok := p.log.OffsetForTimestamp(ts, from)
	if !ok {
		return 0, 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if o >= p.mu.highWatermark {
		return 0, 0, false
	}
	return max(o, p.mu.logStart), foundTs, true
}

// MaxTimestamp is ListOffsets -3 over the local log from the log start:
// batches wholly below a log start that DeleteRecords moved inside a
// segment do not count, and the offset answered is never below it.
func (p *Partition) MaxTimestamp() (base.Stamp, error) {
	p.mu.Lock()
	from := p.mu.logStart
	p.mu.Unlock()
	best, err := p.log.MaxTimestampFrom(from)
	if err != nil || !best.Ok {
		return best, err
	}
	return p.recordOfMaxTimestamp(best, from), nil
}

// recordOfMaxTimestamp moves best from the base offset of the batch that
// carries the max timestamp to the record that does, as Kafka answers -3
// (record.RecordReader.RecordOfMaxTimestamp). A batch that can no longer
// be read as it was (retention or the cleaner replaced it meanwhile)
// leaves best as it is.
func (p *Partition) recordOfMaxTimestamp(best base.Stamp, from base.Offset) base.Stamp {
	batches, err := p.log.Read(best.Offset, 1, nil)
	if err != nil {
		return best
	}
	var rr record.RecordReader
	if o, ok := rr.RecordOfMaxTimestamp(batches, best.Ts, from); ok {
		best.Offset = o
	}
	return best
}
