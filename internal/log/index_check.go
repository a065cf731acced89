package log

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// IndexEntry is one entry of a segment's offset index (.index: Offset and
// Position) or time index (.timeindex: Offset and Timestamp), as absolute
// offsets.
type IndexEntry struct {
	Offset    base.Offset // a batch's base offset
	Position  int64       // .index: the batch's byte position in the .log
	Timestamp int64       // .timeindex: the segment's max timestamp up to that batch, ms
}

// SegmentBatch is where a batch of a segment's .log is, what an index
// check compares the entries with.
type SegmentBatch struct {
	Position     int64
	BaseOffset   base.Offset
	MaxTimestamp int64
}

// IndexReport is what InspectIndex found.
type IndexReport struct {
	Time     bool   // a .timeindex, else a .index
	LogPath  string // the segment's .log the entries were checked against
	Entries  []IndexEntry
	Batches  int      // the valid batches of the .log
	Problems []string // entries that disagree with the .log, in entry order
}

// InspectIndex reads the index file at path (a segment's .index or
// .timeindex) and the .log beside it, and checks every entry against the
// log's batches (CheckOffsetIndex, CheckTimeIndex). An index holds fewer
// entries than the log could have (the active segment's are written at
// roll and close): only the entries present are checked. An error is a
// file that cannot be read or is not an index (its name, its size).
func InspectIndex(path string) (IndexReport, error) {
	segBase, suffix, ok := parseSegmentName(filepath.Base(path))
	if !ok || suffix == logSuffix {
		return IndexReport{}, fmt.Errorf("%s is not a segment's index: name it <20-digit base offset>%s or %s", path, indexSuffix, timeIndexSuffix)
	}
	idx, err := os.ReadFile(path)
	if err != nil {
		return IndexReport{}, err
	}
	logPath := strings.TrimSuffix(path, suffix) + logSuffix
	data, err := os.ReadFile(logPath)
	if err != nil {
		return IndexReport{}, err
	}
	batches := segmentBatches(data)
	r := IndexReport{Time: suffix == timeIndexSuffix, LogPath: logPath, Batches: len(batches)}
	if r.Time {
		es, err := decodeTimeIndex(idx)
		if err != nil {
			return IndexReport{}, fmt.Errorf("%s: %w", path, err)
		}
		for _, e := range es {
			r.Entries = append(r.Entries, IndexEntry{Offset: segBase + base.Offset(e.rel), Timestamp: e.ts})
		}
		r.Problems = CheckTimeIndex(r.Entries, batches)
		return r, nil
	}
	es, err := decodeOffsetIndex(idx, int64(len(data)))
	if err != nil {
		return IndexReport{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range es {
		r.Entries = append(r.Entries, IndexEntry{Offset: segBase + base.Offset(e.rel), Position: int64(e.pos)})
	}
	r.Problems = CheckOffsetIndex(r.Entries, batches)
	return r, nil
}

// segmentBatches lists the batches of a .log's bytes up to the first that
// is not a whole valid batch (a torn tail, or the zeros filled ahead of an
// active segment's writes), where recovery would cut.
func segmentBatches(data []byte) []SegmentBatch {
	var out []SegmentBatch
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err != nil || h.Size() < record.HeaderSize || pos+h.Size() > len(data) ||
			record.ComputeCRC(data[pos:pos+h.Size()]) != h.CRC {
			break
		}
		out = append(out, SegmentBatch{Position: int64(pos), BaseOffset: h.BaseOffset, MaxTimestamp: h.MaxTimestamp})
		pos += h.Size()
	}
	return out
}

// CheckOffsetIndex returns, for each entry of a .index that does not name
// a batch of batches (the segment's, in order) by its base offset and
// position, why.
func CheckOffsetIndex(entries []IndexEntry, batches []SegmentBatch) []string {
	byPos := make(map[int64]SegmentBatch, len(batches))
	for _, b := range batches {
		byPos[b.Position] = b
	}
	var problems []string
	for _, e := range entries {
		b, ok := byPos[e.Position]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("offset %d: position %d is not the start of a batch", e.Offset, e.Position))
		case b.BaseOffset != e.Offset:
			problems = append(problems, fmt.Sprintf("offset %d: the batch at position %d begins at offset %d", e.Offset, e.Position, b.BaseOffset))
		}
	}
	return problems
}

// CheckTimeIndex returns, for each entry of a .timeindex that does not
// name the first batch whose max timestamp reached the entry's (the
// segment's max so far, carried by that batch), why.
func CheckTimeIndex(entries []IndexEntry, batches []SegmentBatch) []string {
	var problems []string
	i := 0
	maxBefore, seen := int64(0), false // the max timestamp of batches[:i]
	for _, e := range entries {
		for i < len(batches) && batches[i].BaseOffset < e.Offset {
			if ts := batches[i].MaxTimestamp; !seen || ts > maxBefore {
				maxBefore = ts
			}
			seen = true
			i++
		}
		switch {
		case i == len(batches) || batches[i].BaseOffset != e.Offset:
			problems = append(problems, fmt.Sprintf("timestamp %d: no batch begins at offset %d", e.Timestamp, e.Offset))
		case batches[i].MaxTimestamp != e.Timestamp:
			problems = append(problems, fmt.Sprintf("timestamp %d: the batch at offset %d has max timestamp %d", e.Timestamp, e.Offset, batches[i].MaxTimestamp))
		case seen && maxBefore >= e.Timestamp:
			problems = append(problems, fmt.Sprintf("timestamp %d at offset %d: an earlier batch already reached %d", e.Timestamp, e.Offset, maxBefore))
		}
	}
	return problems
}
