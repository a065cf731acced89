package cleaner

import (
	"fmt"
	"maps"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/record"
)

// TestReference003CommittedTombstoneAfterAbortedTxn is KAFKA-21410
// (reference 003): a pass stops mid-log because its offset map is full,
// right after an ABORT marker of producer P; the next pass starts there
// and reaches a later, committed tombstone of P for key K. Kafka seeded
// that pass with the aborted transaction (it ended before the pass's
// start, but the lower bound was the log start), took P's committed
// tombstone for aborted data, kept K's old value, and removed the
// tombstone after delete.retention.ms: K came back. Here a batch is aborted
// only if it lies inside one of its producer's aborted ranges, and a pass
// is seeded only with the transactions that end at or after its start; K
// stays deleted.
func TestReference003CommittedTombstoneAfterAbortedTxn(t *testing.T) {
	const p = 5
	lg := modelLog{byBase: map[base.Offset]record.Header{}, records: map[base.Offset]gotRec{},
		lastData: map[int64]base.Offset{}, abortedRec: map[base.Offset]bool{}}
	var next base.Offset
	txn := func(recs ...tRec) {
		s := plain(next, recs...)
		s.Transactional, s.ProducerID, s.ProducerEpoch, s.BaseSequence = true, p, 0, int32(next)
		lg.appendBatch(t, build(t, s), &next)
		lg.lastData[p] = next - 1
	}
	end := func(abort bool) {
		if abort {
			lg.aborted = append(lg.aborted, AbortedTxn{ProducerID: p, First: next - 1, Last: next})
			lg.abortedRec[next-1] = true
		}
		lg.appendBatch(t, build(t, marker(p, next, abort)), &next)
	}
	txn(kv("K", "v1"), kv("Y", "y")) // 0-1, committed
	end(false)                       // 2
	txn(kv("X", "aborted"))          // 3
	end(true)                        // 4: ABORT; the first pass's map ends right after it
	var filler []tRec
	for i := range 8 {
		filler = append(filler, kv(fmt.Sprintf("f%d", i), "x"))
	}
	lg.appendBatch(t, build(t, plain(next, filler...)), &next) // 5-12
	txn(tomb("K"))                                             // 13: P deletes K, and commits
	end(false)                                                 // 14
	txn(kv("Z", "z"))                                          // 15: P's last batch, so that 13 is not it
	end(false)                                                 // 16
	lg.end = next

	m := NewOffsetMap(24 * 10) // 9 keys: K, Y and the 8 fillers do not fit together
	now := modelT0
	log1, mapEnd := pass(t, lg, lg.batches, m, 0, now)
	if mapEnd != 5 {
		t.Fatalf("the first pass's map ends at %d; the scenario needs it right after the ABORT marker at 4", mapEnd)
	}
	log2, mapEnd := pass(t, lg, log1, m, mapEnd, now+1)
	if mapEnd <= 13 {
		t.Fatalf("the second pass's map ends at %d, before P's committed tombstone at 13", mapEnd)
	}
	for mapEnd < lg.end {
		log2, mapEnd = pass(t, lg, log2, m, mapEnd, now+2)
	}
	// Every horizon passes; passes over the clean log remove the tombstone.
	log3, _ := pass(t, lg, log2, m, lg.end, now+modelRetention+2)
	log4, _ := pass(t, lg, log3, m, lg.end, now+modelRetention+3)
	want := map[string]string{"Y": "y", "Z": "z"} // K deleted, X aborted
	for _, f := range filler {
		want[string(f.Key)] = "x"
	}
	for i, l := range [][][]byte{log1, log2, log3, log4} {
		if got := lg.state(t, l); !maps.Equal(got, want) {
			t.Fatalf("after pass %d a consumer from the start reads %v, want %v", i+1, got, want)
		}
	}
	present, _, _ := presentOffsets(t, lg, log4)
	for o, r := range present {
		if string(r.Key) == "K" {
			t.Fatalf("K is still in the log at %d (%q) after its tombstone's horizon", o, r.Value)
		}
	}
}
