package cleaner

import (
	"bytes"
	"fmt"
	"maps"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// The model test of DESIGN §5: random logs of plain, idempotent and
// transactional writes (committed and aborted) with tombstones over a small
// key space, compacted by passes run the way the cleaner driver runs them,
// with random offset-map sizes. Reading the compacted log from the start
// (read_committed: aborted data left out) must give the same final state
// as reading the original.

const (
	modelT0        = testTs
	modelRetention = int64(1_000_000) // far above the number of passes
)

type modelLog struct {
	batches [][]byte
	byBase  map[base.Offset]record.Header // the original batches' headers
	records map[base.Offset]gotRec        // every original record
	end     base.Offset
	// lastData is each producer's last data batch's last offset, what the
	// partition's producer state would answer.
	lastData map[int64]base.Offset
	// aborted are the aborted transactions (the transaction index), and
	// abortedRec the offsets of the records they wrote.
	aborted    []AbortedTxn
	abortedRec map[base.Offset]bool
}

// tester is what the model's checks need of *testing.T and *rapid.T.
type tester interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// abortedFrom is the aborted-transaction index a pass starting at from is
// seeded with.
func (lg modelLog) abortedFrom(from base.Offset) *AbortedTxns {
	return NewAbortedTxns(lg.aborted, from)
}

func genModelLog(t *rapid.T) modelLog {
	keys := rapid.IntRange(1, 6).Draw(t, "keys")
	codecs := rapid.SampledFrom(allCodecs)
	lg := modelLog{byBase: map[base.Offset]record.Header{}, records: map[base.Offset]gotRec{}, lastData: map[int64]base.Offset{},
		abortedRec: map[base.Offset]bool{}}
	seq := map[int64]int32{}
	open := map[int64]base.Offset{}       // transactional producer -> its open transaction's first offset
	openRecs := map[int64][]base.Offset{} // the offsets that transaction wrote
	endTxn := func(pid int64, at base.Offset, abort bool) tBatch {
		if abort {
			lg.aborted = append(lg.aborted, AbortedTxn{ProducerID: pid, First: open[pid], Last: at})
			for _, o := range openRecs[pid] {
				lg.abortedRec[o] = true
			}
		}
		delete(open, pid)
		delete(openRecs, pid)
		return marker(pid, at, abort)
	}
	next := base.Offset(rapid.Int64Range(0, 1000).Draw(t, "logStart"))
	ts := modelT0 - 100_000
	nval := 0
	for n := rapid.IntRange(1, 25).Draw(t, "batches"); n > 0 || len(open) > 0; n-- {
		if n <= 0 { // the log ends: every open transaction ends first
			for pid := range open {
				lg.appendBatch(t, build(t, endTxn(pid, next, rapid.Bool().Draw(t, "abortAtEnd"))), &next)
				break
			}
			continue
		}
		var recs []tRec
		for range rapid.IntRange(1, 7).Draw(t, "records") {
			r := tRec{TsDelta: rapid.Int64Range(-3, 1000).Draw(t, "tsDelta")}
			if rapid.IntRange(0, 9).Draw(t, "keyless") > 0 {
				r.Key = fmt.Appendf(nil, "k%d", rapid.IntRange(0, keys-1).Draw(t, "key"))
			}
			if rapid.IntRange(0, 3).Draw(t, "tombstone") > 0 {
				nval++
				r.Value = fmt.Appendf(nil, "v%d", nval)
			}
			if rapid.IntRange(0, 4).Draw(t, "headers") == 0 {
				r.Headers = []tHdr{{[]byte("h"), fmt.Appendf(nil, "%d", nval)}}
			}
			recs = append(recs, r)
		}
		s := plain(next, recs...)
		for i := range s.Records { // dense() replaced zero deltas; keep the drawn ones
			s.Records[i].TsDelta = recs[i].TsDelta
		}
		s.Codec = codecs.Draw(t, "codec")
		s.BaseTs = ts
		s.LeaderEpoch = int32(rapid.IntRange(0, 2).Draw(t, "leaderEpoch"))
		if rapid.IntRange(0, 5).Draw(t, "logAppendTime") == 0 {
			s.LogAppendTime, s.AppendTs = true, ts+2_000
		}
		switch kind := rapid.IntRange(0, 11).Draw(t, "kind"); {
		case kind < 4: // plain
		case kind < 10: // idempotent (4-6), or transactional (7-9, producers 3 and 4)
			pid := int64(rapid.IntRange(1, 2).Draw(t, "pid"))
			if kind >= 7 {
				pid += 2
				s.Transactional = true
				if _, ok := open[pid]; !ok {
					open[pid] = next
				}
				for i := range recs {
					openRecs[pid] = append(openRecs[pid], next+base.Offset(i))
				}
			}
			s.ProducerID, s.ProducerEpoch, s.BaseSequence = pid, 0, seq[pid]
			seq[pid] += int32(len(recs))
			lg.lastData[pid] = next + base.Offset(len(recs)-1)
		default: // a transaction ends, if one is open
			pid := int64(rapid.IntRange(3, 4).Draw(t, "endPid"))
			if _, ok := open[pid]; ok {
				s = endTxn(pid, next, rapid.Bool().Draw(t, "abort"))
				s.BaseTs = ts
			}
		}
		lg.appendBatch(t, build(t, s), &next)
		ts += rapid.Int64Range(0, 50).Draw(t, "tsStep")
	}
	lg.end = next
	return lg
}

// marker is pid's COMMIT or ABORT marker at offset at: a control batch of
// one record, key version 0 and type, value version 0 and coordinator
// epoch 0, as Kafka writes it.
func marker(pid int64, at base.Offset, abort bool) tBatch {
	typ := "\x00\x01"
	if abort {
		typ = "\x00\x00"
	}
	s := plain(at, kv("\x00\x00"+typ, "\x00\x00\x00\x00\x00\x00"))
	s.Control, s.Transactional = true, true
	s.ProducerID, s.ProducerEpoch, s.BaseSequence = pid, 0, -1
	return s
}

func (lg *modelLog) appendBatch(t fataler, b []byte, next *base.Offset) {
	h, recs := readBatch(t, b)
	lg.byBase[h.BaseOffset] = h
	if !h.Control() {
		for _, r := range recs {
			lg.records[r.Offset] = r
		}
	}
	lg.batches = append(lg.batches, b)
	*next = h.NextOffset()
}

// state reads a log from the start as a read_committed consumer would and
// returns each key's final value; a tombstone deletes the key. What is
// aborted comes from the generated log (abortedRec), not from AbortedTxns.
func (lg modelLog) state(t fataler, batches [][]byte) map[string]string {
	st := map[string]string{}
	for _, b := range batches {
		h, recs := readBatch(t, b)
		if h.Control() {
			continue
		}
		for _, r := range recs {
			switch {
			case lg.abortedRec[r.Offset]:
			case r.Key == nil:
			case r.Value == nil:
				delete(st, string(r.Key))
			default:
				st[string(r.Key)] = string(r.Value)
			}
		}
	}
	return st
}

// pass runs one cleaning pass from firstDirty and returns the new log and
// mapEnd, the next pass's first dirty offset.
func pass(t tester, lg modelLog, batches [][]byte, m *OffsetMap, firstDirty base.Offset, nowMs int64) ([][]byte, base.Offset) {
	m.Reset()
	// When every batch fits, the map covers the whole dirty range, batches
	// removed by earlier passes included: mapEnd is the range's end.
	mapEnd := lg.end
	for _, b := range batches {
		h, _ := record.ParseHeader(b)
		if h.BaseOffset < firstDirty {
			continue
		}
		ok, err := m.AddBatch(b, lg.abortedFrom(firstDirty))
		if err != nil {
			t.Fatalf("AddBatch at %d: %v", h.BaseOffset, err)
		}
		if !ok {
			mapEnd = h.BaseOffset
			break
		}
	}
	if mapEnd == firstDirty && firstDirty < lg.end {
		t.Fatalf("pass from %d made no progress (map of %d)", firstDirty, m.Slots())
	}
	rules := Rules{Map: m, NowMs: nowMs, DeleteRetentionMs: modelRetention,
		LastBatchOfProducer: func(pid int64, last base.Offset) bool {
			o, ok := lg.lastData[pid]
			return ok && o == last
		}, Pass: NewPass(), Aborted: lg.abortedFrom(0)}
	var out [][]byte
	for _, b := range batches {
		h, _ := record.ParseHeader(b)
		if h.NextOffset() > mapEnd {
			out = append(out, b) // at or after mapEnd: untouched this pass
			continue
		}
		c, _, err := CleanBatch(nil, b, rules)
		if err != nil {
			t.Fatalf("CleanBatch at %d: %v", h.BaseOffset, err)
		}
		if len(c) > 0 {
			out = append(out, c)
		}
	}
	return out, mapEnd
}

// compact runs passes from firstDirty until the whole log is clean, at
// least one; the i-th pass runs at now(i). It checks the log after each.
func compact(t tester, lg modelLog, batches [][]byte, m *OffsetMap, firstDirty base.Offset, now func(int) int64, horizons map[base.Offset]int64) [][]byte {
	want := lg.state(t, lg.batches)
	for i := 0; i == 0 || firstDirty < lg.end; i++ {
		batches, firstDirty = pass(t, lg, batches, m, firstDirty, now(i))
		checkWellFormed(t, lg, batches, horizons)
		if got := lg.state(t, batches); !maps.Equal(got, want) {
			t.Fatalf("after pass %d the log reads as\n%v\nwant\n%v", i, got, want)
		}
	}
	return batches
}

// checkWellFormed: (b) every batch parses with a valid CRC, offsets strictly
// ascend, each batch keeps its original span, every record is an original
// record unchanged (offset, key, value, headers, timestamp), and a batch's
// delete horizon never moves once set.
func checkWellFormed(t tester, lg modelLog, batches [][]byte, horizons map[base.Offset]int64) {
	if n, err := record.ValidPrefix(bytes.Join(batches, nil)); err != nil {
		t.Fatalf("log invalid at byte %d: %v", n, err)
	}
	next := base.Offset(0)
	for _, b := range batches {
		h, recs := readBatch(t, b)
		orig, ok := lg.byBase[h.BaseOffset]
		if !ok || orig.LastOffsetDelta != h.LastOffsetDelta || orig.ProducerID != h.ProducerID ||
			orig.BaseSequence != h.BaseSequence || orig.PartitionLeaderEpoch != h.PartitionLeaderEpoch {
			t.Fatalf("batch at %d does not keep the original's span and producer fields:\n%+v\n%+v", h.BaseOffset, h, orig)
		}
		if h.BaseOffset < next {
			t.Fatalf("batch at %d after offset %d", h.BaseOffset, next)
		}
		for _, r := range recs {
			if r.Offset < next || r.Offset > h.LastOffset() {
				t.Fatalf("record at %d out of order or outside its batch", r.Offset)
			}
			next = r.Offset + 1
			if o, ok := lg.records[r.Offset]; !h.Control() && (!ok || !equalRec(o, r)) {
				t.Fatalf("record %v, original %v", r, o)
			}
		}
		next = h.NextOffset()
		checkMaxTimestamp(t, h, orig, recs)
		if hz, ok := h.DeleteHorizon(); ok {
			if prev, seen := horizons[h.BaseOffset]; seen && prev != hz {
				t.Fatalf("horizon of batch %d moved from %d to %d", h.BaseOffset, prev, hz)
			}
			horizons[h.BaseOffset] = hz
		}
	}
}

// checkMaxTimestamp: under CreateTime a batch's max timestamp is its
// records' largest; under LogAppendTime it is the append time, unchanged.
// An emptied batch keeps the max timestamp it had when it lost its last
// records, which an earlier rebuild may have lowered.
func checkMaxTimestamp(t tester, h, orig record.Header, recs []gotRec) {
	want := orig.MaxTimestamp
	switch {
	case h.LogAppendTime():
	case len(recs) == 0:
		if h.MaxTimestamp > orig.MaxTimestamp || h.BaseTimestamp != h.MaxTimestamp {
			t.Fatalf("empty batch at %d: timestamps %d/%d, original max %d", h.BaseOffset, h.BaseTimestamp, h.MaxTimestamp, orig.MaxTimestamp)
		}
		return
	default:
		want = recs[0].Ts
		for _, r := range recs {
			want = max(want, r.Ts)
		}
	}
	if h.MaxTimestamp != want {
		t.Fatalf("batch at %d: max timestamp %d, want %d", h.BaseOffset, h.MaxTimestamp, want)
	}
}

// lastWrites maps each key to the offset of its last write in the original.
func lastWrites(lg modelLog) map[string]base.Offset {
	last := map[string]base.Offset{}
	for o, r := range lg.records {
		if r.Key != nil && !lg.abortedRec[o] && o >= last[string(r.Key)] {
			last[string(r.Key)] = o
		}
	}
	return last
}

// presentOffsets reads a cleaned log: its records by offset, how many
// records each key has outside producers' last batches (which are kept
// whole), and the batch headers.
func presentOffsets(t fataler, lg modelLog, batches [][]byte) (present map[base.Offset]gotRec, count map[string]int, heads map[base.Offset]record.Header) {
	present, count, heads = map[base.Offset]gotRec{}, map[string]int{}, map[base.Offset]record.Header{}
	for _, b := range batches {
		h, recs := readBatch(t, b)
		heads[h.BaseOffset] = h
		if h.Control() {
			continue
		}
		for _, r := range recs {
			present[r.Offset] = r
			if !keptWhole(lg, h) {
				count[string(r.Key)]++
			}
		}
	}
	return present, count, heads
}

// keptWhole: a producer's last batch is never cleaned (clean_batch.go).
func keptWhole(lg modelLog, h record.Header) bool {
	last, ok := lg.lastData[h.ProducerID]
	return h.Idempotent() && ok && last == h.LastOffset()
}

// inKeptWhole reports whether offset o lies in a batch kept whole.
func inKeptWhole(lg modelLog, heads map[base.Offset]record.Header, o base.Offset) bool {
	for _, h := range heads {
		if h.BaseOffset <= o && o <= h.LastOffset() {
			return keptWhole(lg, h)
		}
	}
	return false
}

func TestCompactionModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lg := genModelLog(t)
		m := NewOffsetMap(rapid.Int64Range(0, 24*64).Draw(t, "mapBytes"))
		horizons := map[base.Offset]int64{}

		// Phase 1: clean until clean, every pass well before any horizon.
		log1 := compact(t, lg, lg.batches, m, 0, func(i int) int64 { return modelT0 + int64(i) }, horizons)
		present, count, heads := presentOffsets(t, lg, log1)
		for k, o := range lastWrites(lg) {
			// (c) a key's last tombstone stays until its horizon.
			if lg.records[o].Value == nil {
				if r, ok := present[o]; !ok || r.Value != nil {
					t.Fatalf("key %s: last write, a tombstone at %d, is gone before its horizon", k, o)
				}
			}
			// (e) after full compaction each key appears once at most
			// (outside producers' last batches, which are kept whole).
			if count[k] > 1 {
				t.Fatalf("key %s appears %d times after compaction", k, count[k])
			}
		}
		for o, r := range present {
			if r.Key == nil && !inKeptWhole(lg, heads, o) {
				t.Fatalf("keyless record at %d survived", o)
			}
		}
		for at, h := range heads {
			if _, ok := h.DeleteHorizon(); !ok && hasTombstone(t, log1, at) {
				t.Fatalf("batch at %d holds a tombstone but no horizon after a full pass", at)
			}
		}
		checkProducersKept(t, lg, heads)
		checkMarkersKept(t, lg, heads)

		// Phase 2: once every horizon has passed, one more run removes every
		// tombstone, from a full checkpoint or from a lost one.
		var latest int64
		for _, hz := range horizons {
			latest = max(latest, hz)
		}
		from := lg.end
		if rapid.Bool().Draw(t, "checkpointLost") {
			from = 0
		}
		log2 := compact(t, lg, log1, m, from, func(i int) int64 { return latest + int64(i) }, horizons)
		_, count, heads = presentOffsets(t, lg, log2)
		checkTombstonesGone(t, lg, log2)
		checkMarkersGone(t, log2, latest)
		checkMarkersKept(t, lg, heads)
		for k, n := range count {
			if n > 1 {
				t.Fatalf("key %s appears %d times", k, n)
			}
		}
		checkProducersKept(t, lg, heads)
	})
}

func hasTombstone(t fataler, batches [][]byte, at base.Offset) bool {
	for _, b := range batches {
		h, recs := readBatch(t, b)
		if h.BaseOffset != at || h.Control() {
			continue
		}
		for _, r := range recs {
			if r.Value == nil {
				return true
			}
		}
	}
	return false
}

// Each producer's last data batch survives, whole, so that its sequence
// number does too.
func checkProducersKept(t tester, lg modelLog, heads map[base.Offset]record.Header) {
	for pid, last := range lg.lastData {
		found := false
		for _, h := range heads {
			if h.ProducerID == pid && h.LastOffset() == last && !h.Control() {
				found = true
			}
		}
		if !found {
			t.Fatalf("producer %d's last batch (ending at %d) was removed", pid, last)
		}
	}
}

// checkTombstonesGone: (d) past every horizon, a tombstone survives only in
// a producer's last batch (kept whole) or when such a batch before it
// holds its key (pinned: removing it would resurrect that record).
func checkTombstonesGone(t tester, lg modelLog, batches [][]byte) {
	pinned := map[string]bool{}
	for _, b := range batches {
		h, recs := readBatch(t, b)
		whole := keptWhole(lg, h)
		for _, r := range recs {
			if r.Value == nil && !h.Control() && !whole && !pinned[string(r.Key)] {
				t.Fatalf("(d) tombstone at %d survived its horizon", r.Offset)
			}
		}
		if whole {
			for _, r := range recs {
				pinned[string(r.Key)] = true
			}
		}
	}
}

// checkMarkersGone: a transaction marker stays while its transaction has
// data in the log; one without data has a delete horizon, and once every
// horizon of phase 1 (latest) has passed, only one set after that remains.
func checkMarkersGone(t tester, batches [][]byte, latest int64) {
	hasData := map[int64]bool{}
	for _, b := range batches {
		h, _ := readBatch(t, b)
		switch {
		case h.Control():
			hz, ok := h.DeleteHorizon()
			if !hasData[h.ProducerID] && (!ok || hz <= latest) {
				t.Fatalf("marker at %d of producer %d: no data of its transaction left, horizon %d (%v), phase 1's last %d",
					h.BaseOffset, h.ProducerID, hz, ok, latest)
			}
			delete(hasData, h.ProducerID)
		case h.Transactional():
			hasData[h.ProducerID] = true
		}
	}
}

// checkMarkersKept: the marker that ends a transaction stays while any of
// its data does: a read_committed consumer takes a producer's batches after
// an aborted transaction's first offset for aborted until it reads the
// ABORT marker.
func checkMarkersKept(t tester, lg modelLog, heads map[base.Offset]record.Header) {
	for at, h := range heads {
		if h.Control() || !h.Transactional() {
			continue
		}
		end, ok := lg.markerAfter(h.ProducerID, at)
		if !ok {
			t.Fatalf("transactional batch at %d of producer %d has no marker in the original log", at, h.ProducerID)
		}
		if _, kept := heads[end]; !kept {
			t.Fatalf("the marker at %d went while its transaction's batch at %d stays", end, at)
		}
	}
}

// markerAfter is the offset of pid's first marker after o in the original log.
func (lg modelLog) markerAfter(pid int64, o base.Offset) (base.Offset, bool) {
	best, found := base.Offset(0), false
	for at, h := range lg.byBase {
		if h.Control() && h.ProducerID == pid && at > o && (!found || at < best) {
			best, found = at, true
		}
	}
	return best, found
}
