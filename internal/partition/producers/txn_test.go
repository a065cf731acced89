package producers

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/strata-broker/strata/internal/base"
)

// txnFixture: producer 10 (epoch 2) has an open transaction from offset
// 300; producer 11 (epoch 1) wrote one plain batch; producer 12 is known
// only by a COMMIT marker (epoch 5, coordinator epoch 3) at 303.
func txnFixture() *State {
	s := New()
	s.Update(10, 2, BatchMeta{FirstSeq: 0, LastSeq: 1, FirstOffset: 300, LastOffset: 301, TimestampMs: 10}, true)
	s.Update(11, 1, BatchMeta{FirstSeq: 0, LastSeq: 0, FirstOffset: 302, LastOffset: 302, TimestampMs: 11}, false)
	if _, ok := s.ApplyMarker(Marker{ProducerID: 12, Epoch: 5, Commit: true, CoordinatorEpoch: 3}, 303, 12); ok {
		panic("a marker without a transaction completed one")
	}
	return s
}

func wantErrCode(t *testing.T, err error, want *CodeError) {
	t.Helper()
	var ce *CodeError
	if want == nil {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	if !errors.Is(err, want) || !errors.As(err, &ce) || ce.Code != want.Code {
		t.Fatalf("error %v, want code %d", err, want.Code)
	}
}

func TestCheckTransactional(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pid           base.ProducerID
		epoch         int16
		first, last   int32
		transactional bool
		want          VerdictKind
		wantErr       *CodeError
	}{
		{"open transaction, plain batch", 10, 2, 2, 2, false, 0, ErrInvalidTxnState},
		{"open transaction, transactional batch", 10, 2, 2, 3, true, Append, nil},
		{"open transaction, plain duplicate is still a duplicate", 10, 2, 0, 1, false, Duplicate, nil},
		{"open transaction, new epoch, plain batch", 10, 3, 0, 0, false, 0, ErrInvalidTxnState},
		{"open transaction, new epoch, transactional batch", 10, 3, 0, 0, true, Append, nil},
		{"open transaction, sequence gap comes first", 10, 2, 5, 5, false, 0, ErrOutOfOrderSequence},
		{"open transaction, older epoch comes first", 10, 1, 2, 2, false, 0, ErrInvalidProducerEpoch},
		{"no transaction, transactional batch opens one", 11, 1, 1, 1, true, Append, nil},
		{"no transaction, plain batch", 11, 1, 1, 1, false, Append, nil},
		{"after a marker, same epoch from 0", 12, 5, 0, 2, false, Append, nil},
		{"after a marker, same epoch not from 0", 12, 5, 1, 2, false, 0, ErrOutOfOrderSequence},
		{"after a marker, older epoch", 12, 4, 0, 0, true, 0, ErrInvalidProducerEpoch},
		{"unknown producer, transactional", 99, 0, 7, 7, true, Append, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := txnFixture()
			before := s.Snapshot()
			v, err := s.Check(tc.pid, tc.epoch, tc.first, tc.last, tc.transactional)
			wantErrCode(t, err, tc.wantErr)
			if tc.wantErr == nil && v.Kind != tc.want {
				t.Fatalf("Check = %+v, want %v", v, tc.want)
			}
			if string(s.Snapshot()) != string(before) {
				t.Error("Check changed the state")
			}
		})
	}
}

func TestUpdateOpensTransactionOnce(t *testing.T) {
	s := txnFixture()
	s.Update(11, 1, BatchMeta{FirstSeq: 1, LastSeq: 1, FirstOffset: 310, LastOffset: 310}, true)
	s.Update(11, 1, BatchMeta{FirstSeq: 2, LastSeq: 2, FirstOffset: 311, LastOffset: 311}, true)
	e, _ := s.Entry(11)
	if e.CurrentTxnFirstOffset != SomeOffset(310) {
		t.Fatalf("transaction of producer 11 = %+v, want from 310", e.CurrentTxnFirstOffset)
	}
	want := []OpenTxn{{10, 300}, {11, 310}}
	if got := s.OpenTxns(); !slices.Equal(got, want) {
		t.Fatalf("OpenTxns = %v, want %v", got, want)
	}
}

func TestCheckMarker(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       Marker
		wantErr *CodeError
	}{
		{"same epoch", Marker{ProducerID: 10, Epoch: 2}, nil},
		{"higher epoch", Marker{ProducerID: 10, Epoch: 3}, nil},
		{"older epoch", Marker{ProducerID: 10, Epoch: 1}, ErrInvalidProducerEpoch},
		{"older coordinator epoch", Marker{ProducerID: 12, Epoch: 5, CoordinatorEpoch: 2}, ErrTransactionCoordinatorFenced},
		{"same coordinator epoch", Marker{ProducerID: 12, Epoch: 5, CoordinatorEpoch: 3}, nil},
		{"newer coordinator epoch", Marker{ProducerID: 12, Epoch: 5, CoordinatorEpoch: 4}, nil},
		{"older epoch is checked first", Marker{ProducerID: 12, Epoch: 4, CoordinatorEpoch: 0}, ErrInvalidProducerEpoch},
		{"unknown producer", Marker{ProducerID: 99, Epoch: 0}, nil},
		{"negative epoch", Marker{ProducerID: 10, Epoch: -1}, ErrInvalidRecord},
		{"negative coordinator epoch", Marker{ProducerID: 10, Epoch: 2, CoordinatorEpoch: -1}, ErrInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := txnFixture()
			before := s.Snapshot()
			wantErrCode(t, s.CheckMarker(tc.m), tc.wantErr)
			if string(s.Snapshot()) != string(before) {
				t.Error("CheckMarker changed the state")
			}
		})
	}
}

func TestApplyMarkerCommitKeepsSequence(t *testing.T) {
	s := txnFixture()
	ct, ok := s.ApplyMarker(Marker{ProducerID: 10, Epoch: 2, Commit: true, CoordinatorEpoch: 7}, 320, 99)
	if !ok || ct != (CompletedTxn{ProducerID: 10, FirstOffset: 300, LastOffset: 320}) {
		t.Fatalf("ApplyMarker = %+v, %v", ct, ok)
	}
	e, _ := s.Entry(10)
	if e.CurrentTxnFirstOffset.Set || e.CoordinatorEpoch != 7 || e.LastTimestampMs != 99 || len(e.Batches) != 1 || e.Epoch != 2 {
		t.Fatalf("entry after commit = %+v", e)
	}
	if got := s.OpenTxns(); len(got) != 0 {
		t.Fatalf("OpenTxns = %v after the only one committed", got)
	}
	// Same epoch: the sequence goes on; a plain batch is allowed again.
	if v, err := s.Check(10, 2, 2, 2, false); err != nil || v.Kind != Append {
		t.Fatalf("Check after commit = %+v, %v", v, err)
	}
}

func TestApplyMarkerHigherEpochResetsSequence(t *testing.T) {
	s := txnFixture()
	ct, ok := s.ApplyMarker(Marker{ProducerID: 10, Epoch: 3, CoordinatorEpoch: 1}, 320, 99)
	if !ok || ct != (CompletedTxn{ProducerID: 10, FirstOffset: 300, LastOffset: 320, Aborted: true}) {
		t.Fatalf("ApplyMarker = %+v, %v", ct, ok)
	}
	e, _ := s.Entry(10)
	if e.Epoch != 3 || e.Batches != nil || e.CurrentTxnFirstOffset.Set {
		t.Fatalf("entry after abort with a new epoch = %+v", e)
	}
	wantErrCode(t, func() error { _, err := s.Check(10, 3, 2, 2, false); return err }(), ErrOutOfOrderSequence)
	wantErrCode(t, func() error { _, err := s.Check(10, 2, 2, 2, true); return err }(), ErrInvalidProducerEpoch)
	if v, err := s.Check(10, 3, 0, 0, false); err != nil || v.Kind != Append {
		t.Fatalf("seq 0 in the marker's epoch: %+v, %v", v, err)
	}
	s.Update(10, 3, BatchMeta{FirstSeq: 0, LastSeq: 0, FirstOffset: 321, LastOffset: 321}, false)
	if v, err := s.Check(10, 3, 1, 1, false); err != nil || v.Kind != Append {
		t.Fatalf("seq 1 after seq 0: %+v, %v", v, err)
	}
}

func TestApplyMarkerWithoutTransaction(t *testing.T) {
	s := txnFixture()
	if ct, ok := s.ApplyMarker(Marker{ProducerID: 11, Epoch: 1, Commit: false}, 320, 5); ok {
		t.Fatalf("a marker with no open transaction completed %+v", ct)
	}
	if _, ok := s.ApplyMarker(Marker{ProducerID: 77, Epoch: 4, CoordinatorEpoch: 2}, 321, 6); ok {
		t.Fatal("a marker of an unknown producer completed a transaction")
	}
	e, ok := s.Entry(77)
	if !ok || e.Epoch != 4 || e.CoordinatorEpoch != 2 || e.Batches != nil || e.LastTimestampMs != 6 {
		t.Fatalf("producer known by a marker only: %+v, %v", e, ok)
	}
}

func TestApplyMarkerPanicsOnOffsetsGoingBack(t *testing.T) {
	s := txnFixture()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	s.ApplyMarker(Marker{ProducerID: 10, Epoch: 2}, 301, 0)
}

func TestLastStable(t *testing.T) {
	s := txnFixture()
	s.Update(11, 1, BatchMeta{FirstSeq: 1, LastSeq: 1, FirstOffset: 310, LastOffset: 310}, true)
	for _, tc := range []struct {
		logStart, hw, want base.Offset
	}{
		{0, 400, 300},
		{0, 250, 250},   // capped at the high watermark
		{305, 400, 305}, // the log start passed the first open transaction
		{305, 303, 303},
	} {
		if got := s.LastStable(tc.logStart, tc.hw); got != tc.want {
			t.Errorf("LastStable(%d, %d) = %d, want %d", tc.logStart, tc.hw, got, tc.want)
		}
	}
	s.ApplyMarker(Marker{ProducerID: 10, Epoch: 2}, 320, 0)
	if got := s.LastStable(0, 400); got != 310 {
		t.Errorf("after producer 10's abort LastStable = %d, want 310", got)
	}
	s.ApplyMarker(Marker{ProducerID: 11, Epoch: 1, Commit: true}, 321, 0)
	if got, ok := s.FirstUnstable(); ok || s.LastStable(0, 400) != 400 {
		t.Errorf("no open transaction: FirstUnstable = %d, %v", got, ok)
	}
}

func TestCoordinatorBatches(t *testing.T) {
	s := txnFixture()
	wantErrCode(t, s.CheckCoordinator(10, 1, true), ErrInvalidProducerEpoch)
	wantErrCode(t, s.CheckCoordinator(10, 2, false), ErrInvalidTxnState)
	wantErrCode(t, s.CheckCoordinator(10, 2, true), nil)
	wantErrCode(t, s.CheckCoordinator(99, 0, true), nil)
	wantErrCode(t, s.CheckCoordinator(99, -1, true), ErrInvalidRecord)

	s.UpdateCoordinator(11, 1, 330, 44, true)
	e, _ := s.Entry(11)
	if e.CurrentTxnFirstOffset != SomeOffset(330) || len(e.Batches) != 1 || e.LastTimestampMs != 44 {
		t.Fatalf("after a coordinator batch in the same epoch: %+v", e)
	}
	s.UpdateCoordinator(11, 2, 331, 45, true)
	e, _ = s.Entry(11)
	if e.Epoch != 2 || e.Batches != nil || e.CurrentTxnFirstOffset != SomeOffset(330) {
		t.Fatalf("after a coordinator batch in a new epoch: %+v", e)
	}
	wantErrCode(t, func() error { _, err := s.Check(11, 2, 3, 3, true); return err }(), ErrOutOfOrderSequence)
}

func TestTruncateToTransactions(t *testing.T) {
	s := txnFixture()
	s.UpdateCoordinator(11, 1, 304, 0, true) // opens 11's transaction without a batch
	s.TruncateTo(310)
	if got, want := s.OpenTxns(), []OpenTxn{{10, 300}, {11, 304}}; !slices.Equal(got, want) {
		t.Fatalf("TruncateTo past everything changed OpenTxns to %v", got)
	}
	s.TruncateTo(302) // 11's batch at 302 goes, its transaction at 304 goes
	if _, ok := s.Entry(11); ok {
		t.Error("producer 11, with no batch and no transaction left, survived")
	}
	if _, ok := s.Entry(12); !ok {
		t.Error("producer 12, known by its marker only, was removed")
	}
	s.TruncateTo(300) // 10's batch and its transaction go
	if _, ok := s.Entry(10); ok || len(s.OpenTxns()) != 0 {
		t.Errorf("producer 10 survived a truncation to its transaction's start: %v", s.OpenTxns())
	}
}

func TestExpireKeepsOpenTransactions(t *testing.T) {
	s := txnFixture()
	s.ExpireBefore(1_000_000, 1)
	if _, ok := s.Entry(10); !ok {
		t.Fatal("producer 10 with an open transaction expired")
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want only producer 10 left", s.Len())
	}
	s.ApplyMarker(Marker{ProducerID: 10, Epoch: 2, Commit: true}, 400, 500)
	s.ExpireBefore(1_000_000, 1)
	if s.Len() != 0 {
		t.Fatal("producer 10 did not expire once its transaction ended")
	}
}

func TestSnapshotRoundTripTransactions(t *testing.T) {
	s := txnFixture()
	got, err := Restore(s.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Entries(), s.Entries()) || !slices.Equal(got.OpenTxns(), s.OpenTxns()) {
		t.Fatalf("round trip: got %+v %v, want %+v %v", got.Entries(), got.OpenTxns(), s.Entries(), s.OpenTxns())
	}
}
