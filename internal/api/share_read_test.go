package api

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
	"github.com/strata-broker/strata/internal/share"
)

// rebased is batch with its base offset set to at (the CRC does not cover
// it).
func rebased(batch []byte, at int64) []byte {
	binary.BigEndian.PutUint64(batch[0:8], uint64(at))
	return batch
}

func TestTrimToAcquired(t *testing.T) {
	b0, b1, b2 := rebased(producerBatch(2, []byte("a")), 0), rebased(producerBatch(3, []byte("b")), 2), rebased(producerBatch(1, []byte("c")), 5)
	records := bytes.Join([][]byte{b0, b1, b2}, nil) // [0,2) [2,5) [5,6)
	acq := func(rs ...base.Range) []share.Acquisition {
		out := make([]share.Acquisition, len(rs))
		for i, r := range rs {
			out[i] = share.Acquisition{Offsets: r, Deliveries: 1}
		}
		return out
	}
	for _, tc := range []struct {
		what     string
		acquired []share.Acquisition
		want     []byte
	}{
		{"nothing acquired", nil, []byte{}},
		{"the first offset", acq(base.Range{Start: 0, End: 1}), b0},
		{"inside the middle batch", acq(base.Range{Start: 3, End: 4}), b1},
		{"the middle batch's last and the last batch", acq(base.Range{Start: 4, End: 6}), bytes.Join([][]byte{b1, b2}, nil)},
		{"one offset of the first and one of the last", acq(base.Range{Start: 1, End: 2}, base.Range{Start: 5, End: 6}), records},
		{"offsets past every batch", acq(base.Range{Start: 6, End: 9}), []byte{}},
		{"an end exactly at a batch's start", acq(base.Range{Start: 0, End: 2}), b0},
	} {
		if got := trimToAcquired(records, tc.acquired); !bytes.Equal(got, tc.want) || got == nil {
			t.Errorf("%s: %d bytes, want %d", tc.what, len(got), len(tc.want))
		}
	}
	if got := trimToAcquired(nil, acq(base.Range{Start: 0, End: 1})); got == nil || len(got) != 0 {
		t.Errorf("no records: %v, want an empty, non-nil slice", got)
	}
}

func TestAbortedTracker(t *testing.T) {
	tracker := newAbortedTracker([]partition.AbortedTxn{
		{ProducerID: 7, FirstOffset: 2, LastOffset: 5},
		{ProducerID: 7, FirstOffset: 9, LastOffset: 12},
		{ProducerID: 8, FirstOffset: 0, LastOffset: 1},
	})
	header := func(batch []byte) record.Header {
		it := record.SplitBatches(batch)
		_, h, ok := it.Next()
		if !ok {
			t.Fatal("no batch")
		}
		return h
	}
	txn := func(pid, at int64) record.Header { return header(rebased(txnBatch(pid, 0, 0, "v"), at)) }
	control := txnBatch(7, 0, 0, "v")
	control[21+1] |= 0x20 // the attributes' control bit
	record.WriteCRC(control)
	for _, tc := range []struct {
		what string
		h    record.Header
		want bool
	}{
		{"at the first offset of an aborted transaction", txn(7, 2), true},
		{"inside it", txn(7, 4), true},
		{"at its marker", txn(7, 5), false},
		{"before it", txn(7, 1), false},
		{"between two of the producer's", txn(7, 7), false},
		{"in the producer's second", txn(7, 10), true},
		{"another producer's batch", txn(9, 3), false},
		{"another producer's own aborted one", txn(8, 0), true},
		{"a batch outside any transaction", header(rebased(producerBatch(1, []byte("v")), 3)), false},
		{"a control batch", header(rebased(control, 3)), false},
	} {
		if got := tracker.aborts(tc.h); got != tc.want {
			t.Errorf("%s: aborts = %v, want %v", tc.what, got, tc.want)
		}
	}
}
