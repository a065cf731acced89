package offsets

import (
	"testing"

	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// TestAdapterTransactionalRecordsAndMarkers: what AppendTxn and
// AppendMarker write, ReadFrom hands back as transactional records and
// markers, in log order, and a lower producer epoch is refused.
func TestAdapterTransactionalRecordsAndMarkers(t *testing.T) {
	p := openPartition(t)
	defer p.Close()
	a := New(p, clock.Real{})
	prod := runtime.Producer{ID: 42, Epoch: 3}
	appendWait := func(wait func() error, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := wait(); err != nil {
			t.Fatal(err)
		}
	}
	appendWait(a.Append([]runtime.Record{{Key: []byte("plain"), Value: []byte("1")}}))
	appendWait(a.AppendTxn(prod, []runtime.Record{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2"), Value: []byte("v2")}}))
	appendWait(a.AppendMarker(runtime.Marker{Producer: prod, Commit: true, CoordinatorEpoch: 7}))

	recs, next, err := a.ReadFrom(0)
	if err != nil {
		t.Fatal(err)
	}
	if next != 4 || len(recs) != 4 {
		t.Fatalf("read %d records up to %d, want 4 up to 4: %+v", len(recs), next, recs)
	}
	if recs[0].Txn != nil || recs[0].Marker != nil || string(recs[0].Key) != "plain" {
		t.Fatalf("plain record read as %+v", recs[0])
	}
	for _, r := range recs[1:3] {
		if r.Txn == nil || *r.Txn != prod || r.Marker != nil {
			t.Fatalf("transactional record read as %+v", r)
		}
	}
	if m := recs[3].Marker; m == nil || m.Producer != prod || !m.Commit || m.CoordinatorEpoch != 7 || recs[3].Key != nil {
		t.Fatalf("marker read as %+v", recs[3])
	}

	// An abort marker reads back as one: a reload must drop the offsets.
	appendWait(a.AppendTxn(prod, []runtime.Record{{Key: []byte("k3"), Value: []byte("v3")}}))
	appendWait(a.AppendMarker(runtime.Marker{Producer: prod, Commit: false, CoordinatorEpoch: 8}))
	recs, next, err = a.ReadFrom(next)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || next != 6 || recs[1].Marker == nil || recs[1].Marker.Commit || recs[1].Marker.CoordinatorEpoch != 8 {
		t.Fatalf("read after the abort: %+v up to %d", recs, next)
	}

	if _, err := a.AppendTxn(runtime.Producer{ID: 42, Epoch: 2}, []runtime.Record{{Key: []byte("k"), Value: []byte("v")}}); err == nil {
		t.Fatal("a transactional batch of a fenced epoch was appended")
	}
}
