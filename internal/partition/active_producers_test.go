package partition

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/partition/producers"
)

func wantProducers(t testing.TB, p *Partition, want []producers.Entry) {
	t.Helper()
	if got := p.Producers(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Producers() =\n%+v\nwant\n%+v", got, want)
	}
}

// TestProducers: the accessor lists every producer with its epoch, batches,
// timestamp, coordinator epoch and open transaction, follows markers, hands
// out copies, and survives a restart.
func TestProducers(t *testing.T) {
	e := newEnv(t)
	p := e.open(t)
	wantProducers(t, p, []producers.Entry{})

	ts := testStart.UnixMilli()
	idem := spec{pid: 7, epoch: 3, records: 3}
	mustAppend(t, p, batch(t, idem), AcksLeader) // [0, 2], sequences 0..2
	idem.seq, idem.records = 3, 2
	mustAppend(t, p, batch(t, idem), AcksLeader) // [3, 4], sequences 3..4
	tx := txn(4, 0, 2)
	tx.epoch = 1
	mustAppend(t, p, batch(t, tx), AcksLeader) // [5, 6], opens a transaction
	txnEntry := producers.Entry{
		ProducerID:            4,
		Epoch:                 1,
		Batches:               []producers.BatchMeta{{FirstSeq: 0, LastSeq: 1, FirstOffset: 5, LastOffset: 6, TimestampMs: ts}},
		LastTimestampMs:       ts,
		CoordinatorEpoch:      producers.NoCoordinatorEpoch,
		CurrentTxnFirstOffset: producers.SomeOffset(5),
	}
	idemEntry := producers.Entry{
		ProducerID: 7,
		Epoch:      3,
		Batches: []producers.BatchMeta{
			{FirstSeq: 0, LastSeq: 2, FirstOffset: 0, LastOffset: 2, TimestampMs: ts},
			{FirstSeq: 3, LastSeq: 4, FirstOffset: 3, LastOffset: 4, TimestampMs: ts},
		},
		LastTimestampMs:  ts,
		CoordinatorEpoch: producers.NoCoordinatorEpoch,
	}
	wantProducers(t, p, []producers.Entry{txnEntry, idemEntry})

	// A caller changing what it got changes nothing in the partition.
	got := p.Producers()
	got[0].Batches[0].LastSeq = 99
	got[1].Epoch = 99
	wantProducers(t, p, []producers.Entry{txnEntry, idemEntry})

	e.clock.Advance(time.Second)
	if at := mustMarker(t, p, 4, 1, true, 2); at != 7 {
		t.Fatalf("commit marker at %d, want 7", at)
	}
	txnEntry.CurrentTxnFirstOffset = producers.OptionalOffset{}
	txnEntry.CoordinatorEpoch = 2
	txnEntry.LastTimestampMs = testStart.Add(time.Second).UnixMilli()
	wantProducers(t, p, []producers.Entry{txnEntry, idemEntry})

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	wantProducers(t, e.open(t), []producers.Entry{txnEntry, idemEntry})
}
