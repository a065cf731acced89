package cleaner

import (
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// A pass tracks kept data per transaction, not per producer: a marker
// stays while its own transaction has a batch in the cleaned log, and one
// whose transaction lost every batch gets its delete horizon even though an
// earlier transaction of the same producer kept data (its marker ended that
// transaction's tracking).
func TestMarkerStaysOnlyForItsOwnTransaction(t *testing.T) {
	const pid = 7
	txn := func(at base.Offset, recs ...tRec) []byte {
		s := idem(plain(at, recs...))
		s.Transactional = true
		return build(t, s)
	}
	commit := func(at base.Offset) []byte { return build(t, marker(pid, at, false)) }
	log := []struct {
		batch []byte
		want  Outcome
	}{
		{txn(100, kv("a", "1")), BatchCopied},    // a's latest: kept
		{commit(101), BatchCopied},               // its transaction kept data
		{txn(102, kv("b", "old")), BatchRemoved}, // superseded at 200
		{commit(103), BatchRebuilt},              // nothing of its transaction left: horizon
		{txn(104, kv("c", "1")), BatchCopied},    // the next transaction keeps data again
		{commit(105), BatchCopied},
	}
	r := Rules{Map: mapOf("a", 100, "b", 200, "c", 104), NowMs: testNow, DeleteRetentionMs: testRetention,
		LastBatchOfProducer: neverLast, Pass: NewPass()}
	for _, b := range log {
		out, res, err := CleanBatch(nil, b.batch, r)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := readBatch(t, b.batch)
		if res.Outcome != b.want {
			t.Fatalf("batch at %d: %v, want %v", h.BaseOffset, res.Outcome, b.want)
		}
		if h.Control() && b.want == BatchRebuilt {
			oh, _ := readBatch(t, out)
			if hz, ok := oh.DeleteHorizon(); !ok || hz != testNow+testRetention || res.HorizonsSet != 1 {
				t.Fatalf("marker at %d: horizon %d (%v), want %d", h.BaseOffset, hz, ok, testNow+testRetention)
			}
		}
	}
}
