package txn

import (
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Transaction version 2 (KIP-890 part 2): partition leaders add for the
// client (Verify with Add), and every EndTxn v5 bumps the epoch.

// add runs an adding Verify and returns its code, 0 for success.
func (h *harness) implicitAdd(id string, p producer, tps ...base.TopicPartition) int16 {
	h.tb.Helper()
	r := h.handle(runtime.Op{Event: Verify{TransactionalID: id, ProducerID: p.id, ProducerEpoch: p.epoch, Partitions: tps, Add: true}})
	return verifyErrorCode(h.tb, r.Err)
}

// endV2 runs an EndTxn v5 and returns its code and the producer it hands
// out.
func (h *harness) endV2(id string, p producer, commit bool) (int16, producer) {
	h.tb.Helper()
	r := h.do(endReq(id, p.id, p.epoch, endTxnV2Version, commit)).(*kmsg.EndTxnResponse)
	if r.ErrorCode != 0 && (r.ProducerID != -1 || r.ProducerEpoch != -1) {
		h.tb.Fatalf("an EndTxn refused with %v hands out producer %d epoch %d", kerr.ErrorForCode(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
	}
	return r.ErrorCode, producer{id: r.ProducerID, epoch: r.ProducerEpoch}
}

func TestVersion2TransactionsBumpTheEpoch(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	p := producer{pid, epoch}
	wantCode(t, "implicit add", h.implicitAdd("tx", p, tp("t", 0)), nil)
	wantCode(t, "implicit add of another partition", h.implicitAdd("tx", p, tp("t", 1)), nil)
	if tx := h.c.txns["tx"]; tx.state != stateOngoing || tx.clientVersion != 2 || len(tx.partitions) != 2 {
		t.Fatalf("after the adds: %+v", tx)
	}
	h.reload()

	code, next := h.endV2("tx", p, true)
	wantCode(t, "commit", code, nil)
	if want := (producer{pid, epoch + 1}); next != want {
		t.Fatalf("commit hands out %+v, want %+v", next, want)
	}
	if len(h.effects) != 1 || h.effects[0].ProducerEpoch != epoch+1 || !h.effects[0].Commit {
		t.Fatalf("markers %+v, want commit markers at the bumped epoch", h.effects)
	}
	wantCode(t, "a retry while the markers are written", first(h.endV2("tx", p, true)), kerr.ConcurrentTransactions)
	wantCode(t, "the next transaction waits for them", h.implicitAdd("tx", next, tp("t", 0)), kerr.ConcurrentTransactions)
	// franz-go aborts a transaction whose produces it dropped before
	// sending, at once: that abort waits too, and is not fenced
	// (KAFKA-18464; franz-go's TestTxnEtl failed on PRODUCER_FENCED).
	wantCode(t, "an abort of nothing at the bumped epoch waits for them", first(h.endV2("tx", next, false)), kerr.ConcurrentTransactions)
	h.reload()
	h.flushMarkers()
	if tx := h.c.txns["tx"]; tx.state != stateCompleteCommit || tx.epoch != epoch+1 {
		t.Fatalf("after the markers: %+v", tx)
	}

	code, again := h.endV2("tx", p, true)
	wantCode(t, "a retry of the completed commit", code, nil)
	if again != next {
		t.Fatalf("the retry hands out %+v, want %+v", again, next)
	}
	wantCode(t, "a retry that asks to abort", first(h.endV2("tx", p, false)), kerr.InvalidTxnState)
	wantCode(t, "an add at the old epoch", h.implicitAdd("tx", p, tp("t", 0)), kerr.ProducerFenced)
	wantCode(t, "an end at an older epoch", first(h.endV2("tx", producer{pid, epoch - 1}, true)), kerr.ProducerFenced)
	wantCode(t, "an end of another producer id", first(h.endV2("tx", producer{pid + 50, next.epoch}, true)), kerr.InvalidProducerIDMapping)
	wantCode(t, "a commit of nothing", first(h.endV2("tx", next, true)), kerr.InvalidTxnState)

	code, bumped := h.endV2("tx", next, false)
	wantCode(t, "an abort of nothing", code, nil)
	if want := (producer{pid, next.epoch + 1}); bumped != want || len(h.effects) != 0 || h.c.txns["tx"].state != stateCompleteAbort {
		t.Fatalf("an abort of nothing hands out %+v (want %+v), effects %+v, state %v", bumped, want, h.effects, h.c.txns["tx"].state)
	}
	wantCode(t, "the next transaction", h.implicitAdd("tx", bumped, tp("u", 0)), nil)
	h.reload()
	if tx := h.c.txns["tx"]; tx.state != stateOngoing || tx.epoch != bumped.epoch {
		t.Fatalf("the next transaction after a reload: %+v", tx)
	}
}

// An end from the last epoch moves the producer to a new id at epoch 0 once
// its markers are written; a retry with the old id's last epoch gets the
// new one.
func TestVersion2EndMovesToANewProducerID(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	h.c.txns["tx"].epoch = math.MaxInt16 - 1 // as after 32766 transactions
	old := producer{pid, math.MaxInt16 - 1}
	wantCode(t, "add", h.implicitAdd("tx", old, tp("t", 0)), nil)
	code, next := h.endV2("tx", old, false)
	wantCode(t, "abort", code, nil)
	if next.id == pid || next.epoch != 0 {
		t.Fatalf("the last epoch's end hands out %+v, want a new producer id at epoch 0", next)
	}
	if len(h.effects) != 1 || h.effects[0].ProducerID != pid || h.effects[0].ProducerEpoch != math.MaxInt16 {
		t.Fatalf("markers %+v, want the old producer at epoch %d", h.effects, math.MaxInt16)
	}
	wantCode(t, "the new id's first add waits for the markers", h.implicitAdd("tx", next, tp("t", 0)), kerr.ConcurrentTransactions)
	h.reload() // the next producer id is in the Prepare record
	if tx := h.c.txns["tx"]; !tx.nextProducerID.ok || tx.nextProducerID.v != next.id {
		t.Fatalf("after a reload in PrepareAbort: %+v", tx)
	}
	h.flushMarkers()
	if tx := h.c.txns["tx"]; tx.producerID != next.id || tx.epoch != 0 || tx.nextProducerID.ok || tx.state != stateCompleteAbort {
		t.Fatalf("after the markers: %+v", tx)
	}
	code, again := h.endV2("tx", old, false)
	wantCode(t, "a retry with the old id's last epoch", code, nil)
	if again != next {
		t.Fatalf("the retry hands out %+v, want %+v", again, next)
	}
	wantCode(t, "the new id's first transaction", h.implicitAdd("tx", next, tp("t", 0)), nil)
	h.reload()
}

// A transaction of version 2 fenced by a new instance's InitProducerId is
// bumped once, by the fence, and aborted.
func TestVersion2TransactionFenced(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	wantCode(t, "add", h.implicitAdd("tx", producer{pid, epoch}, tp("t", 0)), nil)
	wantCode(t, "a new instance", h.init(initReq("tx", 4)).ErrorCode, kerr.ConcurrentTransactions)
	if len(h.effects) != 1 || h.effects[0].ProducerEpoch != epoch+1 || h.effects[0].Commit {
		t.Fatalf("markers %+v, want abort markers at epoch %d", h.effects, epoch+1)
	}
	h.flushMarkers()
	r := h.init(initReq("tx", 4))
	if r.ErrorCode != 0 || r.ProducerEpoch != epoch+2 {
		t.Fatalf("the new instance's retry: %v epoch %d, want epoch %d", kerr.ErrorForCode(r.ErrorCode), r.ProducerEpoch, epoch+2)
	}
	wantCode(t, "the fenced producer's end", first(h.endV2("tx", producer{pid, epoch}, true)), kerr.ProducerFenced)
}

func TestEndDecisionTable(t *testing.T) {
	const pid, other = 10, 20
	txn := func(s txnState, epoch int16) *txnMetadata {
		return &txnMetadata{producerID: pid, epoch: epoch, state: s, lastProducerID: some[int64](other)}
	}
	rotated := func(s txnState) *txnMetadata { return txn(s, 0) }
	moving := func(s txnState) *txnMetadata {
		m := txn(s, math.MaxInt16)
		m.nextProducerID = some[int64](other + 1)
		return m
	}
	prepare := endVerdict{action: endPrepare}
	nothing := endVerdict{action: endPrepare, nothingAdded: true}
	done := endVerdict{action: endDone}
	refuse := func(e *kerr.Error) endVerdict { return refuseEnd(e.Code) }
	for _, tc := range []struct {
		name   string
		t      *txnMetadata
		p      producer
		commit bool
		v2     bool
		want   endVerdict
	}{
		{"v1 commit of Ongoing", txn(stateOngoing, 5), producer{pid, 5}, true, false, prepare},
		{"v1 at another epoch", txn(stateOngoing, 5), producer{pid, 4}, true, false, refuse(kerr.ProducerFenced)},
		{"v1 of another id", txn(stateOngoing, 5), producer{other, 5}, true, false, refuse(kerr.InvalidProducerIDMapping)},
		{"v1 repeat of a commit", txn(stateCompleteCommit, 5), producer{pid, 5}, true, false, done},
		{"v1 abort after a commit", txn(stateCompleteCommit, 5), producer{pid, 5}, false, false, refuse(kerr.InvalidTxnState)},
		{"v1 while preparing", txn(statePrepareAbort, 5), producer{pid, 5}, true, false, refuse(kerr.ConcurrentTransactions)},
		{"v1 abort of Empty", txn(stateEmpty, 5), producer{pid, 5}, false, false, refuse(kerr.InvalidTxnState)},

		{"v2 commit of Ongoing", txn(stateOngoing, 5), producer{pid, 5}, true, true, prepare},
		{"v2 Ongoing at the epoch before", txn(stateOngoing, 5), producer{pid, 4}, true, true, refuse(kerr.ProducerFenced)},
		{"v2 abort of Empty", txn(stateEmpty, 5), producer{pid, 5}, false, true, nothing},
		{"v2 commit of Empty", txn(stateEmpty, 5), producer{pid, 5}, true, true, refuse(kerr.InvalidTxnState)},
		{"v2 retry while preparing", txn(statePrepareCommit, 6), producer{pid, 5}, true, true, refuse(kerr.ConcurrentTransactions)},
		{"v2 next end while preparing (KAFKA-18464)", txn(statePrepareCommit, 6), producer{pid, 6}, false, true, refuse(kerr.ConcurrentTransactions)},
		{"v2 older epoch while preparing", txn(statePrepareCommit, 6), producer{pid, 3}, false, true, refuse(kerr.ConcurrentTransactions)},
		{"v2 next producer id while preparing", moving(statePrepareCommit), producer{other + 1, 0}, false, true, refuse(kerr.ConcurrentTransactions)},
		{"v2 another id while preparing", txn(statePrepareCommit, 6), producer{other, 6}, false, true, refuse(kerr.InvalidProducerIDMapping)},
		{"v2 retry of a commit", txn(stateCompleteCommit, 6), producer{pid, 5}, true, true, done},
		{"v2 retry of an abort", txn(stateCompleteAbort, 6), producer{pid, 5}, false, true, done},
		{"v2 retry of a commit as an abort", txn(stateCompleteCommit, 6), producer{pid, 5}, false, true, refuse(kerr.InvalidTxnState)},
		{"v2 abort of nothing after a commit", txn(stateCompleteCommit, 6), producer{pid, 6}, false, true, nothing},
		{"v2 commit of nothing after a commit", txn(stateCompleteCommit, 6), producer{pid, 6}, true, true, refuse(kerr.InvalidTxnState)},
		{"v2 two epochs behind", txn(stateCompleteCommit, 6), producer{pid, 4}, true, true, refuse(kerr.ProducerFenced)},
		{"v2 retry after a rotation", rotated(stateCompleteAbort), producer{other, math.MaxInt16 - 1}, false, true, done},
		{"v2 old id at another epoch", rotated(stateCompleteAbort), producer{other, 3}, false, true, refuse(kerr.InvalidProducerIDMapping)},
		{"v2 old id while Ongoing", rotated(stateOngoing), producer{other, math.MaxInt16 - 1}, false, true, refuse(kerr.ProducerFenced)},
	} {
		if got := endDecision(tc.t, tc.p, tc.commit, tc.v2); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func first(code int16, _ producer) int16 { return code }

// TestVersion2RotationRetryAfterAReload: a version 2 transaction's
// records are value v1 with the previous producer id, as Kafka writes
// them, so a retried end of the old producer id is still recognized after
// the coordinator reloads (not INVALID_PRODUCER_ID_MAPPING).
func TestVersion2RotationRetryAfterAReload(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	h.c.txns["tx"].epoch = math.MaxInt16 - 1
	old := producer{pid, math.MaxInt16 - 1}
	wantCode(t, "add", h.implicitAdd("tx", old, tp("t", 0)), nil)
	code, next := h.endV2("tx", old, true)
	wantCode(t, "commit", code, nil)
	h.flushMarkers()
	last := kmsg.NewTxnMetadataValue()
	if err := last.ReadFrom(h.records[len(h.records)-1].Value); err != nil || last.Version != 1 ||
		last.ClientTransactionVersion != maxClientVersion || last.PreviousProducerID != pid || last.ProducerID != next.id {
		t.Fatalf("CompleteCommit record %+v (%v), want v1 of client version 2 with the previous producer id", last, err)
	}
	h.reload()
	code, again := h.endV2("tx", old, true)
	wantCode(t, "the old id's retry after a reload", code, nil)
	if again != next {
		t.Fatalf("the retry hands out %+v, want %+v", again, next)
	}
}
