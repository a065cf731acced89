package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// The remote indexes use Kafka's layouts (as the local log does), built by
// the copier from the bytes it uploads: offsets are relative to the remote
// segment's Range.Start and positions to the start of its .log object, so
// a partial copy's indexes describe exactly its object.
const (
	offsetEntryBytes = 8  // {relativeOffset u32, position u32}
	timeEntryBytes   = 12 // {timestamp i64, relativeOffset u32}
	// IndexIntervalBytes is how sparse the remote offset index is: an entry
	// once more than this many bytes were uploaded since the last one
	// (Kafka's default index.interval.bytes).
	IndexIntervalBytes = 4096
)

// ErrCorruptObject classifies every object read from the bucket that
// breaks an invariant; the error names the key. Such an object is never
// served.
var ErrCorruptObject = errors.New("tier: corrupt remote object")

func corruptf(key, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrCorruptObject, key, fmt.Sprintf(format, args...))
}

type offsetEntry struct {
	rel uint32 // batch base offset minus the segment's Range.Start
	pos uint32 // byte position of the batch in the .log object
}

type timeEntry struct {
	ts  int64  // largest batch max timestamp so far, ms
	rel uint32 // the first batch (relative base offset) that reached ts
}

// indexBuilder builds both indexes of an upload from its batch headers,
// fed in order. There is no offset index entry for position 0 (a lookup
// below the first entry answers 0), and a time index entry is added with
// each offset index entry if the max timestamp grew, plus one at the end
// for the segment's max timestamp (as Kafka adds on roll).
type indexBuilder struct {
	start      base.Offset // the upload's first offset
	next       base.Offset // expected base offset of the next batch
	sizeBytes  int64
	sinceEntry int
	offsets    []byte
	times      []byte
	lastTs     int64
	hasLastTs  bool
	maxTs      int64
	maxTsRel   uint32
	hasMaxTs   bool
}

func newIndexBuilder(start base.Offset) *indexBuilder {
	return &indexBuilder{start: start, next: start}
}

// add notes the batch h, the next in the upload. Batches must be
// contiguous and fit Kafka's u32 fields.
func (b *indexBuilder) add(h record.Header) error {
	if h.BaseOffset != b.next {
		return fmt.Errorf("batch at offset %d, want %d", h.BaseOffset, b.next)
	}
	if int64(h.LastOffset()-b.start) > math.MaxUint32 || b.sizeBytes+int64(h.Size()) > math.MaxUint32 {
		return fmt.Errorf("batch at offset %d overflows a u32 index field", h.BaseOffset)
	}
	rel := uint32(h.BaseOffset - b.start)
	if !b.hasMaxTs || h.MaxTimestamp > b.maxTs {
		b.maxTs, b.maxTsRel, b.hasMaxTs = h.MaxTimestamp, rel, true
	}
	if b.sinceEntry > IndexIntervalBytes {
		b.offsets = binary.BigEndian.AppendUint32(b.offsets, rel)
		b.offsets = binary.BigEndian.AppendUint32(b.offsets, uint32(b.sizeBytes))
		b.maybeAppendTime()
		b.sinceEntry = 0
	}
	b.sinceEntry += h.Size()
	b.sizeBytes += int64(h.Size())
	b.next = h.NextOffset()
	return nil
}

func (b *indexBuilder) maybeAppendTime() {
	if !b.hasMaxTs || b.hasLastTs && b.maxTs <= b.lastTs {
		return
	}
	b.times = binary.BigEndian.AppendUint64(b.times, uint64(b.maxTs))
	b.times = binary.BigEndian.AppendUint32(b.times, b.maxTsRel)
	b.lastTs, b.hasLastTs = b.maxTs, true
}

// finish returns the encoded offset and time indexes.
func (b *indexBuilder) finish() (offsets, times []byte) {
	b.maybeAppendTime()
	return b.offsets, b.times
}

// decodeOffsetIndex parses and checks a remote offset index against its
// segment: whole entries, relative offsets and positions strictly
// ascending, inside the segment's range and its .log object.
func decodeOffsetIndex(key string, b []byte, seg remotemeta.RemoteSegment) ([]offsetEntry, error) {
	if len(b)%offsetEntryBytes != 0 {
		return nil, corruptf(key, "offset index of %d bytes is not a multiple of %d", len(b), offsetEntryBytes)
	}
	es := make([]offsetEntry, 0, len(b)/offsetEntryBytes)
	for i := 0; i < len(b); i += offsetEntryBytes {
		e := offsetEntry{rel: binary.BigEndian.Uint32(b[i:]), pos: binary.BigEndian.Uint32(b[i+4:])}
		switch n := len(es); {
		case e.pos == 0 || int64(e.pos) >= seg.SizeBytes || int64(e.rel) >= seg.Range.Len():
			return nil, corruptf(key, "offset index entry %d (%d, %d) outside the segment", n, e.rel, e.pos)
		case n > 0 && (e.rel <= es[n-1].rel || e.pos <= es[n-1].pos):
			return nil, corruptf(key, "offset index entry %d out of order", n)
		}
		es = append(es, e)
	}
	return es, nil
}

// decodeTimeIndex parses and checks a remote time index: whole entries,
// timestamps and relative offsets strictly ascending, inside the range.
func decodeTimeIndex(key string, b []byte, seg remotemeta.RemoteSegment) ([]timeEntry, error) {
	if len(b)%timeEntryBytes != 0 {
		return nil, corruptf(key, "time index of %d bytes is not a multiple of %d", len(b), timeEntryBytes)
	}
	es := make([]timeEntry, 0, len(b)/timeEntryBytes)
	for i := 0; i < len(b); i += timeEntryBytes {
		e := timeEntry{ts: int64(binary.BigEndian.Uint64(b[i:])), rel: binary.BigEndian.Uint32(b[i+8:])}
		switch n := len(es); {
		case int64(e.rel) >= seg.Range.Len():
			return nil, corruptf(key, "time index entry %d offset %d outside the segment", n, e.rel)
		case n > 0 && (e.ts <= es[n-1].ts || e.rel <= es[n-1].rel):
			return nil, corruptf(key, "time index entry %d out of order", n)
		}
		es = append(es, e)
	}
	return es, nil
}

// lookupOffset returns the position of the last entry with rel <= target
// (0 below the first), and the position of the next entry (end when none):
// the batch holding target starts in [pos, nextPos).
func lookupOffset(es []offsetEntry, target uint32, end int64) (pos, nextPos int64) {
	i := sort.Search(len(es), func(i int) bool { return es[i].rel > target })
	if i > 0 {
		pos = int64(es[i-1].pos)
	}
	nextPos = end
	if i < len(es) {
		nextPos = int64(es[i].pos)
	}
	return pos, nextPos
}

// encodeLeaderEpochCheckpoint is Kafka's leader-epoch-checkpoint file:
// version 0, the entry count, then one "epoch startOffset" line each.
func encodeLeaderEpochCheckpoint(epochs []base.EpochStart) []byte {
	var sb strings.Builder
	sb.WriteString("0\n" + strconv.Itoa(len(epochs)) + "\n")
	for _, e := range epochs {
		fmt.Fprintf(&sb, "%d %d\n", e.Epoch, e.Start)
	}
	return []byte(sb.String())
}
