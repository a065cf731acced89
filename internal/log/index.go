package log

import (
	"encoding/binary"
	"fmt"
	"sort"
)

const (
	offsetEntrySize = 8  // {relativeOffset uint32, position uint32}
	timeEntrySize   = 12 // {timestamp int64, relativeOffset uint32}
)

type offsetEntry struct {
	rel uint32 // batch base offset minus segment base offset
	pos uint32 // byte position of the batch in the .log
}

type timeEntry struct {
	ts  int64  // max batch timestamp so far, ms
	rel uint32 // first batch (relative base offset) that reached ts
}

// offsetIndex is a segment's sparse offset index. flushed counts the entries
// already written to the file; entries past it exist only in memory.
type offsetIndex struct {
	entries    []offsetEntry
	flushed    int
	maxEntries int
}

func (x *offsetIndex) full() bool { return len(x.entries) >= x.maxEntries }

func (x *offsetIndex) last() (offsetEntry, bool) {
	if len(x.entries) == 0 {
		return offsetEntry{}, false
	}
	return x.entries[len(x.entries)-1], true
}

// lookup returns the position of the last entry with rel <= target, or 0: the
// batch containing target starts at or after it.
func (x *offsetIndex) lookup(target uint32) uint32 {
	e, _ := x.lookupEntry(target)
	return e.pos
}

// lookupEntry returns the last entry with rel <= target, if any.
func (x *offsetIndex) lookupEntry(target uint32) (offsetEntry, bool) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].rel > target })
	if i == 0 {
		return offsetEntry{}, false
	}
	return x.entries[i-1], true
}

// truncateAt drops the entries at or after relative offset rel.
func (x *offsetIndex) truncateAt(rel uint32) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].rel >= rel })
	x.entries = x.entries[:i]
	x.flushed = min(x.flushed, i)
}

func (x *offsetIndex) encode(from int) []byte {
	b := make([]byte, 0, (len(x.entries)-from)*offsetEntrySize)
	for _, e := range x.entries[from:] {
		b = binary.BigEndian.AppendUint32(b, e.rel)
		b = binary.BigEndian.AppendUint32(b, e.pos)
	}
	return b
}

// decodeOffsetIndex parses and checks a whole .index file against the size of
// its .log. It never trusts the file: sizes, order and bounds are checked.
func decodeOffsetIndex(b []byte, logSize int64) ([]offsetEntry, error) {
	if len(b)%offsetEntrySize != 0 {
		return nil, fmt.Errorf("%w: offset index size %d is not a multiple of %d", ErrCorrupt, len(b), offsetEntrySize)
	}
	es := make([]offsetEntry, 0, len(b)/offsetEntrySize)
	for i := 0; i < len(b); i += offsetEntrySize {
		e := offsetEntry{rel: binary.BigEndian.Uint32(b[i:]), pos: binary.BigEndian.Uint32(b[i+4:])}
		if int64(e.pos) >= logSize || e.pos == 0 {
			return nil, fmt.Errorf("%w: offset index position %d outside (0, %d)", ErrCorrupt, e.pos, logSize)
		}
		if n := len(es); n > 0 && (e.rel <= es[n-1].rel || e.pos <= es[n-1].pos) {
			return nil, fmt.Errorf("%w: offset index entry %d out of order", ErrCorrupt, n)
		}
		es = append(es, e)
	}
	return es, nil
}

// timeIndex is a segment's sparse time index; see doc.go for what an entry means.
type timeIndex struct {
	entries    []timeEntry
	flushed    int
	maxEntries int
}

func (x *timeIndex) full() bool { return len(x.entries) >= x.maxEntries }

func (x *timeIndex) last() (timeEntry, bool) {
	if len(x.entries) == 0 {
		return timeEntry{}, false
	}
	return x.entries[len(x.entries)-1], true
}

// maybeAppend adds (ts, rel) only if ts grows the index.
func (x *timeIndex) maybeAppend(ts int64, rel uint32) {
	if l, ok := x.last(); ok && ts <= l.ts {
		return
	}
	x.entries = append(x.entries, timeEntry{ts: ts, rel: rel})
}

// lookup returns the relative offset of the last entry with ts <= target, or 0:
// every batch before it has a smaller max timestamp than target.
func (x *timeIndex) lookup(target int64) uint32 {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].ts > target })
	if i == 0 {
		return 0
	}
	return x.entries[i-1].rel
}

func (x *timeIndex) truncateAt(rel uint32) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].rel >= rel })
	x.entries = x.entries[:i]
	x.flushed = min(x.flushed, i)
}

func (x *timeIndex) encode(from int) []byte {
	b := make([]byte, 0, (len(x.entries)-from)*timeEntrySize)
	for _, e := range x.entries[from:] {
		b = binary.BigEndian.AppendUint64(b, uint64(e.ts))
		b = binary.BigEndian.AppendUint32(b, e.rel)
	}
	return b
}

// decodeTimeIndex parses and checks a whole .timeindex file. Whether its last
// offset is inside the segment is checked once the segment's next offset is known.
func decodeTimeIndex(b []byte) ([]timeEntry, error) {
	if len(b)%timeEntrySize != 0 {
		return nil, fmt.Errorf("%w: time index size %d is not a multiple of %d", ErrCorrupt, len(b), timeEntrySize)
	}
	es := make([]timeEntry, 0, len(b)/timeEntrySize)
	for i := 0; i < len(b); i += timeEntrySize {
		e := timeEntry{ts: int64(binary.BigEndian.Uint64(b[i:])), rel: binary.BigEndian.Uint32(b[i+8:])}
		if n := len(es); n > 0 && (e.ts <= es[n-1].ts || e.rel <= es[n-1].rel) {
			return nil, fmt.Errorf("%w: time index entry %d out of order", ErrCorrupt, n)
		}
		es = append(es, e)
	}
	return es, nil
}
