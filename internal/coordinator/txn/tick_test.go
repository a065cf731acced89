package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestTimeoutAbortBumpsEpoch(t *testing.T) {
	h := newHarness(t)
	req := initReq("tx", 4)
	req.TransactionTimeoutMillis = 25_000
	r := h.init(req)
	pid, epoch := r.ProducerID, r.ProducerEpoch
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0), tp("t", 1))), nil)

	// The scan runs every AbortCheckInterval (10s); the transaction times
	// out once more than 25s have passed since it started.
	for range 2 {
		h.advance(10 * time.Second)
		h.wantState("tx", "Ongoing")
	}
	h.advance(5 * time.Second) // exactly 25s: not yet (strictly after)
	h.advance(4 * time.Second) // 29s, but the scan is due at 30s
	h.wantState("tx", "Ongoing")
	h.advance(time.Second)
	h.wantState("tx", "PrepareAbort")
	if v := h.lastValue("tx"); v.ProducerEpoch != epoch+1 || v.State != kmsg.TransactionStatePrepareAbort {
		t.Fatalf("timeout record %+v", v)
	}
	if len(h.effects) != 1 || h.effects[0].Commit || h.effects[0].ProducerEpoch != epoch+1 || len(h.effects[0].Partitions) != 2 {
		t.Fatalf("timeout effects %+v", h.effects)
	}
	h.flushMarkers()
	h.wantState("tx", "CompleteAbort")
	// The producer's late EndTxn or AddPartitions are fenced.
	wantCode(t, "late commit", h.endCode(endReq("tx", pid, epoch, 4, true)), kerr.ProducerFenced)
	wantCode(t, "late add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 2))), kerr.ProducerFenced)
	// KIP-360 recovery with the old epoch is fenced as well: the fence
	// forgot the last epoch.
	wantCode(t, "late recovery", h.init(initWith("tx", 4, pid, epoch)).ErrorCode, kerr.ProducerFenced)
}

func TestExpiryWritesTombstone(t *testing.T) {
	h := newHarness(t)
	h.mustInit("idle")
	pid, epoch := h.mustInit("busy")
	wantCode(t, "add", h.addCode(addReq("busy", pid, epoch, 3, tp("t", 0))), nil)
	cpid, cepoch := h.mustInit("done")
	wantCode(t, "add", h.addCode(addReq("done", cpid, cepoch, 3, tp("t", 0))), nil)
	wantCode(t, "commit", h.endCode(endReq("done", cpid, cepoch, 4, true)), nil)
	h.flushMarkers()

	// Keep "busy" from timing out: only expiry is under test.
	h.c.txns["busy"].timeout = 30 * 24 * time.Hour
	n := len(h.records)
	h.advance(7*24*time.Hour - time.Hour)
	if len(h.records) != n {
		t.Fatal("ids expired early")
	}
	for range 2 {
		h.advance(time.Hour)
	}
	var tombstones []string
	for _, r := range h.records[n:] {
		id, err := readKey(r.Key)
		if err != nil || r.Value != nil {
			t.Fatalf("record %v %v after expiry", id, err)
		}
		tombstones = append(tombstones, id)
	}
	if len(tombstones) != 2 || tombstones[0] != "done" || tombstones[1] != "idle" {
		t.Fatalf("tombstones %v", tombstones)
	}
	wantCode(t, "describe expired", h.describe("idle").ErrorCode, kerr.TransactionalIDNotFound)
	h.wantState("busy", "Ongoing")
	if c := replayAll(t, h.opts, h.records); len(c.txns) != 1 || c.txns["busy"] == nil {
		t.Fatalf("replayed ids %v", snapshotOf(c))
	}
	// An expired id starts over with a new producer id.
	if p, e := h.mustInit("idle"); e != 0 || p <= cpid {
		t.Fatalf("init after expiry: %d %d", p, e)
	}
}

func TestReloadReemitsMarkers(t *testing.T) {
	h := newHarness(t)
	pa, ea := h.mustInit("a")
	wantCode(t, "add a", h.addCode(addReq("a", pa, ea, 3, tp("t", 0))), nil)
	wantCode(t, "commit a", h.endCode(endReq("a", pa, ea, 4, true)), nil)
	pb, eb := h.mustInit("b")
	wantCode(t, "add b", h.addCode(addReq("b", pb, eb, 3, tp("t", 1))), nil)
	pc, ec := h.mustInit("c")
	wantCode(t, "add c", h.addCode(addReq("c", pc, ec, 3, tp("t", 2))), nil)
	wantCode(t, "fence c", h.init(initReq("c", 4)).ErrorCode, kerr.ConcurrentTransactions)
	before := h.effects
	h.effects = nil

	h.reload() // the markers were never written: a crash
	if len(h.effects) != 2 || !equalMarkers(h.effects[0], before[0]) || !equalMarkers(h.effects[1], before[1]) {
		t.Fatalf("after reload effects %+v, want %+v", h.effects, before)
	}
	h.advance(time.Second)
	if len(h.effects) != 2 {
		t.Fatal("a later tick emitted markers again")
	}
	h.flushMarkers()
	h.wantState("a", "CompleteCommit")
	h.wantState("b", "Ongoing")
	h.wantState("c", "CompleteAbort")
}

// TestTimeoutBoundaryIsStrict pins Kafka's timedOutTransactions: a
// transaction is aborted once more than its timeout has passed since it
// started (start + timeout < now), not at exactly its timeout.
func TestTimeoutBoundaryIsStrict(t *testing.T) {
	h := newHarnessWith(t, func(o *Options) { o.AbortCheckInterval = time.Millisecond })
	req := initReq("tx", 4)
	req.TransactionTimeoutMillis = 25_000
	r := h.init(req)
	wantCode(t, "add", h.addCode(addReq("tx", r.ProducerID, r.ProducerEpoch, 3, tp("t", 0))), nil)
	h.advance(25 * time.Second) // a scan at exactly start + timeout
	h.wantState("tx", "Ongoing")
	h.advance(time.Millisecond)
	h.wantState("tx", "PrepareAbort")
}

// TestExpiryBoundaryIsInclusive pins Kafka's shouldExpire: an idle id is
// removed once lastUpdate <= now - transactional.id.expiration.ms, so at
// exactly the expiration, and not a millisecond before.
func TestExpiryBoundaryIsInclusive(t *testing.T) {
	h := newHarnessWith(t, func(o *Options) { o.ExpiryCheckInterval = time.Millisecond })
	h.mustInit("idle")
	n := len(h.records)
	h.advance(h.opts.IDExpiration - time.Millisecond)
	h.wantState("idle", "Empty")
	if len(h.records) != n {
		t.Fatal("an id expired a millisecond early")
	}
	h.advance(time.Millisecond)
	wantCode(t, "describe at the expiration", h.describe("idle").ErrorCode, kerr.TransactionalIDNotFound)
	if len(h.records) != n+1 || h.records[n].Value != nil {
		t.Fatalf("expiry wrote %d records, want one tombstone", len(h.records)-n)
	}
}
