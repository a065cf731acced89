package txn

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// verifyCode runs a Verify event and returns its code, 0 for success.
func (h *harness) verifyCode(ev Verify) int16 {
	h.tb.Helper()
	n := len(h.records)
	r := h.handle(runtime.Op{Event: ev})
	if len(h.records) != n || len(h.effects) != 0 && r.Err != nil {
		h.tb.Fatalf("a verification wrote records or effects")
	}
	return verifyErrorCode(h.tb, r.Err)
}

// verifyErrorCode is the code of a Verify's answer, 0 for success.
func verifyErrorCode(tb tb, err error) int16 {
	tb.Helper()
	if err == nil {
		return 0
	}
	var ve *VerifyError
	if !errors.As(err, &ve) {
		tb.Fatalf("a Verify failed with %v, want a *VerifyError", err)
	}
	return ve.Code
}

func TestVerifyPartitionsOfTheOngoingTransaction(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	ev := func(pid int64, epoch int16, tps ...base.TopicPartition) Verify {
		return Verify{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch, Partitions: tps}
	}
	wantCode(t, "before any partition", h.verifyCode(ev(pid, epoch, tp("t", 0))), kerr.InvalidTxnState)
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0), tp("t", 1))), nil)
	for _, tc := range []struct {
		name string
		ev   Verify
		want *kerr.Error
	}{
		{"added partitions", ev(pid, epoch, tp("t", 0), tp("t", 1)), nil},
		{"a partition not added", ev(pid, epoch, tp("t", 0), tp("t", 2)), kerr.InvalidTxnState},
		{"another producer id", ev(pid+1, epoch, tp("t", 0)), kerr.InvalidProducerIDMapping},
		{"an older epoch", ev(pid, epoch-1, tp("t", 0)), kerr.ProducerFenced},
		{"an unknown transactional id", Verify{TransactionalID: "nope", ProducerID: pid, ProducerEpoch: epoch, Partitions: []base.TopicPartition{tp("t", 0)}}, kerr.InvalidProducerIDMapping},
	} {
		wantCode(t, tc.name, h.verifyCode(tc.ev), tc.want)
	}
	wantCode(t, "commit", h.endCode(endReq("tx", pid, epoch, 4, true)), nil)
	h.effects = nil
	wantCode(t, "while completing", h.verifyCode(ev(pid, epoch, tp("t", 0))), kerr.ConcurrentTransactions)
	h.written(MarkersWritten{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch})
	// A produce of the ended transaction arriving late: refused, so it
	// cannot open a transaction that nothing would end.
	wantCode(t, "after the commit", h.verifyCode(ev(pid, epoch, tp("t", 0))), kerr.InvalidTxnState)
}

// TestVerifyNeedsAnOngoingTransaction: a verification is answered nil
// only for an Ongoing transaction, whatever partitions it names, so that
// none of an idle producer's batches is taken as transactional.
func TestVerifyNeedsAnOngoingTransaction(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	ev := Verify{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch}
	wantCode(t, "Empty", h.verifyCode(ev), kerr.InvalidTxnState)
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0))), nil)
	wantCode(t, "Ongoing", h.verifyCode(ev), nil)
	wantCode(t, "commit", h.endCode(endReq("tx", pid, epoch, 4, true)), nil)
	h.flushMarkers()
	wantCode(t, "CompleteCommit", h.verifyCode(ev), kerr.InvalidTxnState)
}
