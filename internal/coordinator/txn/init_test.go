package txn

import (
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

func TestInitProducerIDRequestChecks(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name      string
		req       *kmsg.InitProducerIDRequest
		timeoutMs int32
		want      *kerr.Error
	}{
		{"empty id", initReq("", 4), testTimeoutMs, kerr.InvalidRequest},
		{"zero timeout", initReq("tx", 4), 0, kerr.InvalidTransactionTimeout},
		{"negative timeout", initReq("tx", 4), -1, kerr.InvalidTransactionTimeout},
		{"timeout above max", initReq("tx", 4), int32(15*time.Minute/time.Millisecond) + 1, kerr.InvalidTransactionTimeout},
		{"producer id without epoch", initWith("tx", 3, 5, -1), testTimeoutMs, kerr.InvalidRequest},
		{"epoch without producer id", initWith("tx", 4, -1, 5), testTimeoutMs, kerr.InvalidRequest},
	} {
		tc.req.TransactionTimeoutMillis = tc.timeoutMs
		r := h.init(tc.req)
		wantCode(t, tc.name, r.ErrorCode, tc.want)
		if r.ProducerID != -1 || r.ProducerEpoch != -1 {
			t.Fatalf("%s: error answer carries producer %d epoch %d", tc.name, r.ProducerID, r.ProducerEpoch)
		}
	}
	if len(h.records) != 0 || len(h.c.txns) != 0 {
		t.Fatal("refused InitProducerId requests changed the state")
	}
	// v0-v2 carry no producer fields: whatever kmsg left there is ignored.
	req := initWith("tx", 2, 5, -1)
	req.TransactionTimeoutMillis = int32(15 * time.Minute / time.Millisecond)
	wantCode(t, "v2 at the max timeout", h.init(req).ErrorCode, nil)
}

func TestInitBumpsEpoch(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	for want := int16(1); want < 4; want++ {
		p, e := h.mustInit("tx")
		if p != pid || e != want {
			t.Fatalf("init %d: producer %d epoch %d", want, p, e)
		}
	}
	// A new timeout is taken; the id keeps its producer id.
	req := initReq("tx", 4)
	req.TransactionTimeoutMillis = 1234
	h.init(req)
	if v := h.lastValue("tx"); v.TimeoutMillis != 1234 || v.ProducerEpoch != 4 {
		t.Fatalf("record %+v", v)
	}
}

func TestFencingBySecondInit(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0))), nil)

	r := h.init(initReq("tx", 4))
	wantCode(t, "fencing init", r.ErrorCode, kerr.ConcurrentTransactions)
	if r.ProducerID != -1 || r.ProducerEpoch != -1 {
		t.Fatalf("fencing answer %+v", r)
	}
	if v := h.lastValue("tx"); v.State != kmsg.TransactionStatePrepareAbort || v.ProducerEpoch != epoch+1 || len(v.Topics) != 1 {
		t.Fatalf("fence record %+v", v)
	}
	if len(h.effects) != 1 || h.effects[0].Commit || h.effects[0].ProducerEpoch != epoch+1 {
		t.Fatalf("fence effects %+v", h.effects)
	}

	// The old producer is fenced, in the code its version understands.
	for v, want := range map[int16]*kerr.Error{0: kerr.InvalidProducerEpoch, 1: kerr.InvalidProducerEpoch, 2: kerr.ProducerFenced, 4: kerr.ProducerFenced} {
		wantCode(t, "old end", h.endCode(endReq("tx", pid, epoch, v, true)), want)
		wantCode(t, "old add offsets", h.offsetsCode(offsetsReq("tx", pid, epoch, v, "g")), want)
	}
	for v, want := range map[int16]*kerr.Error{1: kerr.InvalidProducerEpoch, 2: kerr.ProducerFenced, 3: kerr.ProducerFenced} {
		wantCode(t, "old add", h.addCode(addReq("tx", pid, epoch, v, tp("t", 1))), want)
	}
	wantCode(t, "init while aborting", h.init(initReq("tx", 4)).ErrorCode, kerr.ConcurrentTransactions)

	h.flushMarkers()
	h.wantState("tx", "CompleteAbort")
	p, e := h.mustInit("tx")
	if p != pid || e != epoch+2 {
		t.Fatalf("retried init: producer %d epoch %d, want %d %d", p, e, pid, epoch+2)
	}
	// The old producer's KIP-360 recovery is fenced too.
	for v, want := range map[int16]*kerr.Error{3: kerr.InvalidProducerEpoch, 4: kerr.ProducerFenced} {
		wantCode(t, "old recovery", h.init(initWith("tx", v, pid, epoch)).ErrorCode, want)
	}
}

func TestKIP360Recovery(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0))), nil)
	wantCode(t, "abort", h.endCode(endReq("tx", pid, epoch, 4, false)), nil)
	h.flushMarkers()

	// The producer presents its current producer id and epoch: bumped.
	r := h.init(initWith("tx", 4, pid, epoch))
	wantCode(t, "recovery", r.ErrorCode, nil)
	if r.ProducerID != pid || r.ProducerEpoch != epoch+1 {
		t.Fatalf("recovery answer %+v", r)
	}
	// Its retry (the answer was lost) gets the same epoch, without a bump.
	n := len(h.records)
	r = h.init(initWith("tx", 4, pid, epoch))
	wantCode(t, "retry", r.ErrorCode, nil)
	if r.ProducerID != pid || r.ProducerEpoch != epoch+1 || len(h.records) != n+1 {
		t.Fatalf("retry answer %+v", r)
	}
	if v := h.lastValue("tx"); v.ProducerEpoch != epoch+1 || v.State != kmsg.TransactionStateEmpty {
		t.Fatalf("retry record %+v", v)
	}
	for _, tc := range []struct {
		name string
		req  *kmsg.InitProducerIDRequest
		want *kerr.Error
	}{
		{"other epoch v4", initWith("tx", 4, pid, epoch+7), kerr.ProducerFenced},
		{"other epoch v3", initWith("tx", 3, pid, epoch+7), kerr.InvalidProducerEpoch},
		{"other producer id", initWith("tx", 4, pid+9, 0), kerr.ProducerFenced},
	} {
		wantCode(t, tc.name, h.init(tc.req).ErrorCode, tc.want)
	}
	// A plain init (a new instance) forgets the last epoch.
	h.mustInit("tx")
	wantCode(t, "retry after a new instance", h.init(initWith("tx", 4, pid, epoch)).ErrorCode, kerr.ProducerFenced)

	// An id the coordinator does not know (expired) gets a new producer id.
	r = h.init(initWith("gone", 4, 77, 3))
	wantCode(t, "recovery of an unknown id", r.ErrorCode, nil)
	if r.ProducerID == 77 || r.ProducerEpoch != 0 {
		t.Fatalf("recovery of an unknown id %+v", r)
	}
}

// setEpoch sets id's epoch, as a long life of the producer would, and
// writes it.
func (h *harness) setEpoch(id string, epoch int16) {
	h.tb.Helper()
	tx := h.c.txns[id]
	tx.epoch = epoch
	tx.lastEpoch = optional[int16]{}
	var res runtime.Result
	h.c.write(tx, &res)
	h.collect(res)
}

func TestEpochExhaustionRotatesProducerID(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	h.setEpoch("tx", math.MaxInt16-2)
	p, e := h.mustInit("tx")
	if p != pid || e != math.MaxInt16-1 {
		t.Fatalf("bump to the last epoch: %d %d", p, e)
	}
	// The exhausted epoch is never bumped: a new producer id at epoch 0.
	h.pidErr = errAllocator
	r := h.init(initReq("tx", 4))
	wantCode(t, "allocator failure", r.ErrorCode, kerr.CoordinatorNotAvailable)
	if tx := h.c.txns["tx"]; tx.producerID != pid || tx.epoch != math.MaxInt16-1 {
		t.Fatal("a failed allocation changed the state")
	}
	h.pidErr = nil
	r = h.init(initWith("tx", 4, pid, math.MaxInt16-1))
	wantCode(t, "rotation", r.ErrorCode, nil)
	if r.ProducerID == pid || r.ProducerEpoch != 0 {
		t.Fatalf("rotation answer %+v", r)
	}
	newPID := r.ProducerID
	if tx := h.c.txns["tx"]; !tx.lastProducerID.ok || tx.lastProducerID.v != pid || tx.lastEpoch != some[int16](math.MaxInt16-1) {
		t.Fatalf("after rotation: last producer %+v last epoch %+v", tx.lastProducerID, tx.lastEpoch)
	}
	// A retry of the rotation (its answer was lost) gets the new producer.
	r = h.init(initWith("tx", 4, pid, math.MaxInt16-1))
	wantCode(t, "rotation retried", r.ErrorCode, nil)
	if r.ProducerID != newPID || r.ProducerEpoch != 0 {
		t.Fatalf("rotation retry answer %+v", r)
	}
}

func TestFenceOfTheLastEpochThenRotation(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	h.setEpoch("tx", math.MaxInt16-1)
	wantCode(t, "add", h.addCode(addReq("tx", pid, math.MaxInt16-1, 3, tp("t", 0))), nil)
	wantCode(t, "fence", h.init(initReq("tx", 4)).ErrorCode, kerr.ConcurrentTransactions)
	if v := h.lastValue("tx"); v.ProducerEpoch != math.MaxInt16 || v.State != kmsg.TransactionStatePrepareAbort {
		t.Fatalf("fence record %+v", v)
	}
	h.flushMarkers()
	// The old producer, recovering with its epoch, is fenced, not crashed.
	wantCode(t, "old recovery", h.init(initWith("tx", 4, pid, math.MaxInt16-1)).ErrorCode, kerr.ProducerFenced)
	p, e := h.mustInit("tx")
	if p == pid || e != 0 {
		t.Fatalf("init after the fence: %d %d", p, e)
	}
}

func TestInitAllocatorFailureForANewID(t *testing.T) {
	h := newHarness(t)
	h.pidErr = errAllocator
	wantCode(t, "init", h.init(initReq("tx", 4)).ErrorCode, kerr.CoordinatorNotAvailable)
	if len(h.c.txns) != 0 || len(h.records) != 0 {
		t.Fatal("a failed allocation created the id")
	}
}

// TestKIP360RetryDoesNotReachPastATransaction: the last epoch a KIP-360
// retry may present is forgotten once a transaction completes (Kafka's
// prepareComplete sets it to the current epoch): an InitProducerId that
// presents the epoch before the bump after a whole transaction happened
// at the bumped one is a zombie, and fenced.
func TestKIP360RetryDoesNotReachPastATransaction(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	r := h.init(initWith("tx", 4, pid, epoch))
	wantCode(t, "recovery", r.ErrorCode, nil)
	bumped := r.ProducerEpoch
	if bumped != epoch+1 {
		t.Fatalf("recovery answer %+v", r)
	}
	wantCode(t, "add", h.addCode(addReq("tx", pid, bumped, 3, tp("t", 0))), nil)
	wantCode(t, "commit", h.endCode(endReq("tx", pid, bumped, 4, true)), nil)
	h.flushMarkers()
	h.wantState("tx", "CompleteCommit")
	wantCode(t, "a retry of the recovery after the commit", h.init(initWith("tx", 4, pid, epoch)).ErrorCode, kerr.ProducerFenced)
	if tx := h.c.txns["tx"]; tx.epoch != bumped {
		t.Fatalf("the fenced retry moved the epoch to %d", tx.epoch)
	}
}

// TestOldProducerIDIsFencedUnlessItsEpochIsExhausted pins Kafka's
// isValidProducerId: after a rotation, the previous producer id is only
// taken with an exhausted epoch (a retry of the rotating InitProducerId);
// at any other epoch it is an old producer, fenced, even when its epoch
// happens to equal the new producer id's.
func TestOldProducerIDIsFencedUnlessItsEpochIsExhausted(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	h.setEpoch("tx", math.MaxInt16-1)
	newPID, e := h.mustInit("tx") // a new instance: rotates
	if newPID == pid || e != 0 {
		t.Fatalf("rotation: %d %d", newPID, e)
	}
	n := len(h.records)
	for _, epoch := range []int16{0, 1, 5} {
		wantCode(t, "the old producer id", h.init(initWith("tx", 4, pid, epoch)).ErrorCode, kerr.ProducerFenced)
	}
	if tx := h.c.txns["tx"]; tx.producerID != newPID || tx.epoch != 0 || len(h.records) != n {
		t.Fatalf("a fenced InitProducerId changed the state: producer %d epoch %d", tx.producerID, tx.epoch)
	}
}
