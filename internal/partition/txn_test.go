package partition

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition/producers"
	"github.com/strata-broker/strata/internal/record"
)

// txn is a transactional batch of pid at seq holding records records.
func txn(pid int64, seq int32, records int) spec {
	return spec{pid: pid, seq: seq, records: records, transactional: true}
}

func mustMarker(t testing.TB, p *Partition, pid base.ProducerID, epoch int16, commit bool, coordinatorEpoch int32) base.Offset {
	t.Helper()
	at, wait, err := p.AppendMarker(pid, epoch, commit, coordinatorEpoch)
	if err != nil {
		t.Fatalf("AppendMarker(%d, %d, commit=%v, %d): %v", pid, epoch, commit, coordinatorEpoch, err)
	}
	if err := wait(); err != nil {
		t.Fatalf("marker wait: %v", err)
	}
	return at
}

func wantLastStable(t testing.TB, p *Partition, want base.Offset) {
	t.Helper()
	off := p.Offsets()
	if off.LastStable != want {
		t.Fatalf("LastStable = %d, want %d (high watermark %d)", off.LastStable, want, off.HighWatermark)
	}
	if got := p.LastStableOffset(); got != want {
		t.Fatalf("LastStableOffset() = %d, want %d", got, want)
	}
}

func TestTransactionCommitAndAbort(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	wantLastStable(t, p, 0)
	mustAppend(t, p, batch(t, txn(1, 0, 2)), AcksLeader) // [0, 1]
	mustAppend(t, p, batch(t, spec{}), AcksLeader)       // 2, plain
	mustAppend(t, p, batch(t, txn(2, 0, 1)), AcksLeader) // 3
	mustAppend(t, p, batch(t, txn(1, 2, 1)), AcksLeader) // 4, same transaction
	wantLastStable(t, p, 0)
	if got, want := p.OpenTxns(), []producers.OpenTxn{{ProducerID: 1, FirstOffset: 0}, {ProducerID: 2, FirstOffset: 3}}; !slices.Equal(got, want) {
		t.Fatalf("OpenTxns = %v, want %v", got, want)
	}

	e.clock.Advance(time.Second)
	if at := mustMarker(t, p, 2, 0, false, 0); at != 5 { // producer 1's is still open
		t.Fatalf("abort marker at %d, want 5", at)
	}
	wantLastStable(t, p, 0)
	if at := mustMarker(t, p, 1, 0, true, 0); at != 6 {
		t.Fatalf("commit marker at %d, want 6", at)
	}
	wantLastStable(t, p, 7)
	mustAppend(t, p, batch(t, txn(2, 1, 1)), AcksLeader) // 7
	if at := mustMarker(t, p, 2, 0, false, 0); at != 8 {
		t.Fatalf("abort marker at %d", at)
	}
	wantLastStable(t, p, 9)

	all := []AbortedTxn{
		{ProducerID: 2, FirstOffset: 3, LastOffset: 5, LastStableOffset: 0}, // producer 1's from 0 was open
		{ProducerID: 2, FirstOffset: 7, LastOffset: 8, LastStableOffset: 9},
	}
	for _, tc := range []struct {
		from, upTo base.Offset
		want       []AbortedTxn
	}{
		{0, 9, all},
		{0, 3, nil},     // both begin at or after 3
		{0, 4, all[:1]}, // the second begins at 7
		{6, 9, all[1:]}, // the first ended at 5
		{5, 9, all},     // from inside the first's marker
		{9, 20, nil},    // past every marker
		{6, 7, nil},     // between them
	} {
		if got := p.AbortedTxns(tc.from, tc.upTo); !slices.Equal(got, tc.want) {
			t.Errorf("AbortedTxns(%d, %d) = %v, want %v", tc.from, tc.upTo, got, tc.want)
		}
	}
}

// A marker is the batch Kafka writes: a control batch, transactional,
// base sequence -1, one record with the marker's key and value, stamped
// with the clock and the leader epoch.
func TestMarkerBatchIsKafkas(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	mustAppend(t, p, batch(t, txn(4, 0, 1)), AcksLeader)
	e.clock.Advance(time.Minute)
	at := mustMarker(t, p, 4, 3, true, 9)
	rr, err := p.Read(at, 1<<10, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rr.Records
	if h, _ := record.ParseHeader(got); h.BaseOffset != at || h.Size() != len(got) {
		t.Fatalf("read %d bytes, header %+v", len(got), h)
	}
	want := record.AppendEndTxnMarker(nil, 4, 3, record.EndTxnMarker{Commit: true, CoordinatorEpoch: 9}, e.clock.Now().UnixMilli())
	record.SetBaseOffset(want, at)
	record.SetPartitionLeaderEpoch(want, 1)
	if !bytes.Equal(got, want) {
		t.Fatalf("marker batch\n got %x\nwant %x", got, want)
	}
}

func TestNonTransactionalBatchInOpenTransaction(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, txn(1, 0, 1)), AcksLeader)
	_, _, err := p.Append(batch(t, spec{pid: 1, seq: 1}), AcksLeader)
	wantCode(t, err, producers.CodeInvalidTxnState)
	if end := p.Offsets().LogEnd; end != 1 {
		t.Fatalf("log end %d after a refused batch", end)
	}
	mustAppend(t, p, batch(t, txn(1, 1, 1)), AcksLeader)
	mustMarker(t, p, 1, 0, true, 0)
	mustAppend(t, p, batch(t, spec{pid: 1, seq: 2}), AcksLeader) // no transaction open now
}

func TestMarkerFencing(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, spec{pid: 1, epoch: 2, seq: 0, transactional: true}), AcksLeader)
	end := p.Offsets().LogEnd
	_, _, err := p.AppendMarker(1, 1, true, 0)
	wantCode(t, err, producers.CodeInvalidProducerEpoch)
	if !errors.Is(err, producers.ErrInvalidProducerEpoch) {
		t.Fatalf("%v is not ErrInvalidProducerEpoch", err)
	}
	if got := p.Offsets().LogEnd; got != end {
		t.Fatalf("a marker of an older epoch was written: log end %d, want %d", got, end)
	}
	mustMarker(t, p, 1, 2, true, 5)
	mustAppend(t, p, batch(t, spec{pid: 1, epoch: 2, seq: 1, transactional: true}), AcksLeader)
	end = p.Offsets().LogEnd
	_, _, err = p.AppendMarker(1, 2, false, 4)
	wantCode(t, err, producers.CodeTransactionCoordinatorFenced)
	if !errors.Is(err, producers.ErrTransactionCoordinatorFenced) {
		t.Fatalf("%v is not ErrTransactionCoordinatorFenced", err)
	}
	if got := p.Offsets().LogEnd; got != end {
		t.Fatalf("a fenced marker was written: log end %d, want %d", got, end)
	}
	wantLastStable(t, p, end-1) // still open
	mustMarker(t, p, 1, 2, false, 5)
	wantLastStable(t, p, end+1)
}

// A marker with a higher epoch (the coordinator bumped it, as when it
// aborts a timed-out transaction) resets the sequence: the producer's next
// batch in that epoch starts at 0.
func TestMarkerWithHigherEpochThenSequenceZero(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, txn(1, 0, 3)), AcksLeader) // seq 0..2, epoch 0
	mustMarker(t, p, 1, 1, false, 0)
	_, _, err := p.Append(batch(t, spec{pid: 1, epoch: 1, seq: 3}), AcksLeader)
	wantCode(t, err, producers.CodeOutOfOrderSequenceNumber)
	_, _, err = p.Append(batch(t, spec{pid: 1, epoch: 0, seq: 3}), AcksLeader)
	wantCode(t, err, producers.CodeInvalidProducerEpoch)
	mustAppend(t, p, batch(t, spec{pid: 1, epoch: 1, seq: 0}), AcksLeader)
	mustAppend(t, p, batch(t, spec{pid: 1, epoch: 1, seq: 1}), AcksLeader)
	if got := p.AbortedTxns(0, 100); len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 3 {
		t.Fatalf("AbortedTxns = %v", got)
	}
}

// Kafka refuses control batches from clients: only the coordinator path
// writes markers.
func TestClientControlBatchRefused(t *testing.T) {
	p := newEnv(t).open(t)
	marker := record.AppendEndTxnMarker(nil, 1, 0, record.EndTxnMarker{Commit: true}, testStart.UnixMilli())
	for _, send := range []func([]byte) error{
		func(b []byte) error { _, _, err := p.Append(b, AcksAll); return err },
		func(b []byte) error { _, _, err := p.AppendFromCoordinator(b); return err },
	} {
		wantCode(t, send(bytes.Clone(marker)), record.CodeInvalidRecord)
	}
	if end := p.Offsets().LogEnd; end != 0 {
		t.Fatalf("log end %d", end)
	}
}

func TestAppendFromCoordinator(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, spec{}), AcksLeader) // 0
	coord := spec{pid: 5, epoch: 2, noSeq: true, transactional: true, records: 2}
	_, _, err := p.Append(batch(t, coord), AcksAll)
	wantCode(t, err, record.CodeInvalidRecord) // a client must send sequences
	res, wait, err := p.AppendFromCoordinator(batch(t, coord))
	if err != nil || wait == nil {
		t.Fatalf("AppendFromCoordinator = %+v, wait nil %v, %v", res, wait == nil, err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if res.BaseOffset != 1 {
		t.Fatalf("base offset %d, want 1", res.BaseOffset)
	}
	wantLastStable(t, p, 1)
	// No sequence checks: the same batch again is appended again.
	if _, _, err := p.AppendFromCoordinator(batch(t, coord)); err != nil {
		t.Fatal(err)
	}
	old := coord
	old.epoch = 1
	_, _, err = p.AppendFromCoordinator(batch(t, old))
	wantCode(t, err, producers.CodeInvalidProducerEpoch)
	plain := coord
	plain.transactional = false
	_, _, err = p.AppendFromCoordinator(batch(t, plain))
	wantCode(t, err, producers.CodeInvalidTxnState)
	mustMarker(t, p, 5, 2, true, 0)
	wantLastStable(t, p, p.Offsets().HighWatermark)
	// A batch without a producer id is appended as a client's.
	if _, _, err := p.AppendFromCoordinator(batch(t, spec{})); err != nil {
		t.Fatal(err)
	}
}

func TestReadCommittedStopsAtLastStable(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, spec{}), AcksLeader)       // 0
	mustAppend(t, p, batch(t, txn(1, 0, 2)), AcksLeader) // [1, 2]
	mustAppend(t, p, batch(t, spec{}), AcksLeader)       // 3
	wantLastStable(t, p, 1)

	bases := func(b []byte) []base.Offset {
		var out []base.Offset
		for it := record.SplitBatches(b); ; {
			_, h, ok := it.Next()
			if !ok {
				return out
			}
			out = append(out, h.BaseOffset)
		}
	}
	read := func(from base.Offset, iso Isolation) ([]base.Offset, error) {
		rr, err := p.ReadIsolated(from, 1<<20, nil, iso)
		return bases(rr.Records), err
	}
	region := func(from base.Offset, iso Isolation) ([]base.Offset, base.Offset) {
		r, _, err := p.ReadRegionIsolated(from, 1<<20, iso)
		if errors.Is(err, ErrNoRegion) {
			t.Skip("no file regions here")
		}
		if err != nil {
			t.Fatalf("ReadRegionIsolated(%d): %v", from, err)
		}
		defer r.Close()
		if r.File == nil {
			return nil, r.Next
		}
		b := make([]byte, r.Size)
		if _, err := r.File.ReadAt(b, r.Pos); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		return bases(b), r.Next
	}
	for _, tc := range []struct {
		from base.Offset
		iso  Isolation
		want []base.Offset
	}{
		{0, ReadUncommitted, []base.Offset{0, 1, 3}},
		{0, ReadCommitted, []base.Offset{0}},
		{1, ReadCommitted, nil},
		{3, ReadCommitted, nil},
		{4, ReadCommitted, nil}, // the high watermark
	} {
		got, err := read(tc.from, tc.iso)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ReadIsolated(%d, %v) = %v, %v; want %v", tc.from, tc.iso, got, err, tc.want)
		}
		if got, _ := region(tc.from, tc.iso); !slices.Equal(got, tc.want) {
			t.Errorf("ReadRegionIsolated(%d, %v) = %v; want %v", tc.from, tc.iso, got, tc.want)
		}
	}
	if _, err := read(5, ReadCommitted); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past the high watermark: %v", err)
	}
	mustMarker(t, p, 1, 0, true, 0) // 4
	if got, err := read(0, ReadCommitted); err != nil || !slices.Equal(got, []base.Offset{0, 1, 3, 4}) {
		t.Fatalf("after the commit: %v, %v", got, err)
	}
	if got, next := region(0, ReadCommitted); !slices.Equal(got, []base.Offset{0, 1, 3, 4}) || next != 5 {
		t.Fatalf("region after the commit: %v next %d", got, next)
	}
}

func TestDeleteRecordsPastOpenTransaction(t *testing.T) {
	p := newEnv(t).open(t)
	mustAppend(t, p, batch(t, txn(1, 0, 1)), AcksLeader) // 0
	for range 4 {
		mustAppend(t, p, batch(t, spec{}), AcksLeader)
	}
	wantLastStable(t, p, 0)
	if _, err := p.DeleteRecords(3); err != nil {
		t.Fatal(err)
	}
	wantLastStable(t, p, 3) // Kafka's firstUnstableOffset never lies below the log start
	mustMarker(t, p, 1, 0, false, 0)
	wantLastStable(t, p, 6)
}

func TestExpiryKeepsOpenTransactions(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Config.ProducerIDExpiration = time.Minute })
	p := e.open(t)
	mustAppend(t, p, batch(t, txn(1, 0, 1)), AcksLeader)
	mustAppend(t, p, batch(t, spec{pid: 2}), AcksLeader)
	e.clock.Advance(time.Hour)
	p.ExpireProducers(e.clock.Now().UnixMilli())
	p.mu.Lock()
	_, known1 := p.mu.producers.Entry(1)
	_, known2 := p.mu.producers.Entry(2)
	p.mu.Unlock()
	if !known1 || known2 {
		t.Fatalf("after expiry: producer 1 known %v (open transaction), producer 2 known %v (idle)", known1, known2)
	}
	wantLastStable(t, p, 0)
	mustMarker(t, p, 1, 0, false, 0)
	wantLastStable(t, p, 3)
	if got := p.AbortedTxns(0, 3); len(got) != 1 || got[0].FirstOffset != 0 {
		t.Fatalf("AbortedTxns = %v", got)
	}
}

func TestCollectAbortedStopsAtLastStable(t *testing.T) {
	list := []AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3},
		{ProducerID: 2, FirstOffset: 3, LastOffset: 5, LastStableOffset: 6},
		{ProducerID: 1, FirstOffset: 6, LastOffset: 7, LastStableOffset: 8},
	}
	for _, tc := range []struct {
		from, upTo base.Offset
		want       []AbortedTxn
	}{
		{0, 3, list[:1]},
		{0, 4, list[:2]},
		{0, 6, list[:2]},
		{0, 7, list},
		{3, 7, list[1:]},
		{8, 20, nil},
	} {
		if got := collectAborted(list, tc.from, tc.upTo); !slices.Equal(got, tc.want) {
			t.Errorf("collectAborted(%d, %d) = %v, want %v", tc.from, tc.upTo, got, tc.want)
		}
	}
}

// Markers are written with acks=all: min.insync.replicas applies.
func TestMarkerNeedsMinInsyncReplicas(t *testing.T) {
	p := newEnv(t, func(o *Options) { o.Config.MinInsyncReplicas = 2 }).open(t)
	mustAppend(t, p, batch(t, txn(1, 0, 1)), AcksLeader)
	if _, _, err := p.AppendMarker(1, 0, true, 0); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("AppendMarker = %v, want ErrNotEnoughReplicas", err)
	}
	if end := p.Offsets().LogEnd; end != 1 {
		t.Fatalf("log end %d", end)
	}
}

// HasOpenTxn is per epoch: under transaction version 2 every transaction
// has its own epoch, so a batch of the next one (the epoch after) opens a
// transaction, to be added by its coordinator, even while the marker of
// the last one is not written yet.
func TestHasOpenTxnIsPerEpoch(t *testing.T) {
	p := newEnv(t).open(t)
	if p.HasOpenTxn(1, 0) {
		t.Fatal("an open transaction before any batch")
	}
	mustAppend(t, p, batch(t, txn(1, 0, 1)), AcksLeader)
	if !p.HasOpenTxn(1, 0) || p.HasOpenTxn(1, 1) || p.HasOpenTxn(2, 0) {
		t.Fatalf("with producer 1's transaction open at epoch 0: at 0 %v, at 1 %v, producer 2 %v",
			p.HasOpenTxn(1, 0), p.HasOpenTxn(1, 1), p.HasOpenTxn(2, 0))
	}
	mustMarker(t, p, 1, 1, true, 0) // a version 2 end bumps the epoch into its marker
	if p.HasOpenTxn(1, 0) || p.HasOpenTxn(1, 1) {
		t.Fatal("an open transaction after its marker")
	}
}
