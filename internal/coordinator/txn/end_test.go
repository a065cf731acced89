package txn

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
)

func TestHappyPathCommit(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	if epoch != 0 {
		t.Fatalf("first epoch %d", epoch)
	}
	if v := h.lastValue("tx"); v.State != kmsg.TransactionStateEmpty || v.ProducerID != pid || v.Topics != nil || v.StartTimestamp != -1 || v.TimeoutMillis != testTimeoutMs {
		t.Fatalf("Empty record %+v", v)
	}
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0), tp("t", 1))), nil)
	start := h.now.UnixMilli()
	if v := h.lastValue("tx"); v.State != kmsg.TransactionStateOngoing || v.StartTimestamp != start || len(v.Topics) != 1 {
		t.Fatalf("Ongoing record %+v", v)
	}
	h.now = h.now.Add(time.Second)
	wantCode(t, "add offsets", h.offsetsCode(offsetsReq("tx", pid, epoch, 4, "grp")), nil)
	n := len(h.records)
	wantCode(t, "add again", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 1))), nil)
	if len(h.records) != n {
		t.Fatal("adding a partition already in the transaction wrote a record")
	}

	wantCode(t, "commit", h.endCode(endReq("tx", pid, epoch, 4, true)), nil)
	if v := h.lastValue("tx"); v.State != kmsg.TransactionStatePrepareCommit || v.StartTimestamp != start || len(v.Topics) != 2 {
		t.Fatalf("PrepareCommit record %+v", v)
	}
	want := WriteMarkers{
		TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch, CoordinatorEpoch: testCoordinatorEpoch, Commit: true,
		Partitions: []base.TopicPartition{groupPartition("grp"), tp("t", 0), tp("t", 1)},
	}
	if len(h.effects) != 1 || !equalMarkers(h.effects[0], want) {
		t.Fatalf("effects %+v, want %+v", h.effects, want)
	}
	d := h.wantState("tx", "PrepareCommit")
	if len(d.Topics) != 2 || d.StartTimestamp != start || d.ProducerID != pid || d.TimeoutMillis != testTimeoutMs {
		t.Fatalf("describe %+v", d)
	}

	h.flushMarkers()
	if v := h.lastValue("tx"); v.State != kmsg.TransactionStateCompleteCommit || len(v.Topics) != 0 || v.Topics == nil || v.StartTimestamp != start {
		t.Fatalf("CompleteCommit record %+v", v)
	}
	if d := h.wantState("tx", "CompleteCommit"); len(d.Topics) != 0 {
		t.Fatalf("complete transaction lists partitions %+v", d.Topics)
	}
	wantCode(t, "commit retried", h.endCode(endReq("tx", pid, epoch, 4, true)), nil)
	wantCode(t, "abort after commit", h.endCode(endReq("tx", pid, epoch, 4, false)), kerr.InvalidTxnState)

	// The next transaction keeps the producer id and epoch.
	h.now = h.now.Add(5 * time.Second)
	wantCode(t, "next add", h.addCode(addReq("tx", pid, epoch, 3, tp("u", 0))), nil)
	if d := h.wantState("tx", "Ongoing"); d.StartTimestamp != h.now.UnixMilli() {
		t.Fatalf("a new transaction starts now: %+v", d)
	}
}

func equalMarkers(a, b WriteMarkers) bool {
	return a.TransactionalID == b.TransactionalID && a.ProducerID == b.ProducerID && a.ProducerEpoch == b.ProducerEpoch &&
		a.CoordinatorEpoch == b.CoordinatorEpoch && a.Commit == b.Commit && slices.Equal(a.Partitions, b.Partitions)
}

func TestAbort(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0))), nil)
	wantCode(t, "abort", h.endCode(endReq("tx", pid, epoch, 3, false)), nil)
	h.wantState("tx", "PrepareAbort")
	if len(h.effects) != 1 || h.effects[0].Commit || h.effects[0].ProducerEpoch != epoch {
		t.Fatalf("effects %+v", h.effects)
	}
	h.flushMarkers()
	h.wantState("tx", "CompleteAbort")
	wantCode(t, "abort retried", h.endCode(endReq("tx", pid, epoch, 3, false)), nil)
	wantCode(t, "commit after abort", h.endCode(endReq("tx", pid, epoch, 3, true)), kerr.InvalidTxnState)
}

func TestEndTxnErrors(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	for _, tc := range []struct {
		name string
		req  *kmsg.EndTxnRequest
		want *kerr.Error
	}{
		{"empty id", endReq("", pid, epoch, 4, true), kerr.InvalidRequest},
		{"unknown id", endReq("nope", pid, epoch, 4, true), kerr.InvalidProducerIDMapping},
		{"other producer id", endReq("tx", pid+1, epoch, 4, true), kerr.InvalidProducerIDMapping},
		{"other epoch v1", endReq("tx", pid, epoch+1, 1, true), kerr.InvalidProducerEpoch},
		{"other epoch v2", endReq("tx", pid, epoch+1, 2, true), kerr.ProducerFenced},
		{"commit with no transaction", endReq("tx", pid, epoch, 4, true), kerr.InvalidTxnState},
		{"abort with no transaction", endReq("tx", pid, epoch, 0, false), kerr.InvalidTxnState},
	} {
		wantCode(t, tc.name, h.endCode(tc.req), tc.want)
	}
}

func TestConcurrentTransactionsWhilePreparing(t *testing.T) {
	for _, commit := range []bool{true, false} {
		h := newHarness(t)
		pid, epoch := h.mustInit("tx")
		wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0))), nil)
		wantCode(t, "end", h.endCode(endReq("tx", pid, epoch, 4, commit)), nil)
		n := len(h.records)
		wantCode(t, "same end again", h.endCode(endReq("tx", pid, epoch, 4, commit)), kerr.ConcurrentTransactions)
		wantCode(t, "other end", h.endCode(endReq("tx", pid, epoch, 4, !commit)), kerr.ConcurrentTransactions)
		wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 1))), kerr.ConcurrentTransactions)
		wantCode(t, "add offsets", h.offsetsCode(offsetsReq("tx", pid, epoch, 4, "g")), kerr.ConcurrentTransactions)
		wantCode(t, "init", h.init(initReq("tx", 4)).ErrorCode, kerr.ConcurrentTransactions)
		wantCode(t, "init with a stale producer", h.init(initWith("tx", 4, pid+5, 0)).ErrorCode, kerr.ConcurrentTransactions)
		// Identity checks still come first.
		wantCode(t, "end of another producer", h.endCode(endReq("tx", pid+1, epoch, 4, commit)), kerr.InvalidProducerIDMapping)
		wantCode(t, "add with another epoch", h.addCode(addReq("tx", pid, epoch+1, 3, tp("t", 1))), kerr.ProducerFenced)
		if len(h.records) != n {
			t.Fatal("refused requests wrote records")
		}
		h.flushMarkers()
		if commit {
			h.wantState("tx", "CompleteCommit")
		} else {
			h.wantState("tx", "CompleteAbort")
		}
	}
}

func TestTransactionWithoutPartitionsCompletesAtOnce(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	if codes := h.addCodes(addReq("tx", pid, epoch, 3)); len(codes) != 0 {
		t.Fatalf("codes %v for no partitions", codes)
	}
	h.wantState("tx", "Ongoing")
	n := len(h.records)
	wantCode(t, "commit", h.endCode(endReq("tx", pid, epoch, 4, true)), nil)
	if len(h.records) != n+2 {
		t.Fatalf("%d records, want Prepare and Complete", len(h.records)-n)
	}
	if v := decodeRecord(t, h.records[n], "tx"); v.State != kmsg.TransactionStatePrepareCommit {
		t.Fatalf("first record %+v", v)
	}
	if v := h.lastValue("tx"); v.State != kmsg.TransactionStateCompleteCommit {
		t.Fatalf("second record %+v", v)
	}
	if len(h.effects) != 0 {
		t.Fatalf("effects %+v for no partitions", h.effects)
	}
}

func TestMarkersWrittenStaleChangesNothing(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	wantCode(t, "add", h.addCode(addReq("tx", pid, epoch, 3, tp("t", 0))), nil)
	n := len(h.records)
	for _, ev := range []MarkersWritten{
		{TransactionalID: "nope", ProducerID: pid, ProducerEpoch: epoch},
		{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch}, // Ongoing, not Prepare*
	} {
		h.written(ev)
	}
	if len(h.records) != n {
		t.Fatal("a MarkersWritten for no transaction in Prepare* wrote a record")
	}
	h.wantState("tx", "Ongoing")
	wantCode(t, "commit", h.endCode(endReq("tx", pid, epoch, 4, true)), nil)
	n = len(h.records)
	for _, ev := range []MarkersWritten{
		{TransactionalID: "tx", ProducerID: pid + 1, ProducerEpoch: epoch},
		{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch + 1},
	} {
		h.written(ev)
	}
	if len(h.records) != n {
		t.Fatal("a stale MarkersWritten wrote a record")
	}
	h.wantState("tx", "PrepareCommit")
	h.flushMarkers()
	h.wantState("tx", "CompleteCommit")
	n = len(h.records)
	h.written(MarkersWritten{TransactionalID: "tx", ProducerID: pid, ProducerEpoch: epoch}) // a duplicate
	if len(h.records) != n {
		t.Fatal("a duplicate MarkersWritten wrote a record")
	}
}

func TestAddErrors(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	for _, tc := range []struct {
		name    string
		version int16
		id      string
		pid     int64
		epoch   int16
		want    *kerr.Error
	}{
		{"empty id", 3, "", pid, epoch, kerr.InvalidRequest},
		{"unknown id", 3, "nope", pid, epoch, kerr.InvalidProducerIDMapping},
		{"other producer", 3, "tx", pid + 1, epoch, kerr.InvalidProducerIDMapping},
		{"other epoch v0", 0, "tx", pid, epoch + 1, kerr.InvalidProducerEpoch},
		{"other epoch v1", 1, "tx", pid, epoch + 1, kerr.InvalidProducerEpoch},
		{"other epoch v2", 2, "tx", pid, epoch + 1, kerr.ProducerFenced},
		{"other epoch v3", 3, "tx", pid, epoch + 1, kerr.ProducerFenced},
	} {
		codes := h.addCodes(addReq(tc.id, tc.pid, tc.epoch, tc.version, tp("t", 0), tp("t", 1), tp("u", 0)))
		if len(codes) != 3 {
			t.Fatalf("%s: codes %v", tc.name, codes)
		}
		for _, c := range codes {
			wantCode(t, tc.name, c, tc.want)
		}
		wantCode(t, tc.name+" (offsets)", h.offsetsCode(offsetsReq(tc.id, tc.pid, tc.epoch, tc.version, "g")), tc.want)
	}
	h.wantState("tx", "Empty")
}
