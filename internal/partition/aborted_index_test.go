package partition

import (
	"bytes"
	"testing"

	"github.com/strata-broker/strata/internal/partition/producers"
)

// The index file is a gateway: whatever its bytes, reading keeps a valid
// prefix of whole entries that re-encodes to the file's first bytes.
func FuzzReadAbortedIndex(f *testing.F) {
	good := encodeAbortedEntries([]AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 3, LastStableOffset: 4},
		{ProducerID: 2, FirstOffset: 2, LastOffset: 9, LastStableOffset: 10},
	})
	f.Add(good)
	f.Add(good[:50])
	f.Add([]byte{})
	// The decoder, not the file read: a temporary directory per input makes
	// the fuzzer's workers crawl.
	f.Fuzz(func(t *testing.T, data []byte) {
		file := decodeAbortedIndex(data)
		enc := encodeAbortedEntries(file.entries)
		if !bytes.HasPrefix(data, enc) {
			t.Fatal("the entries kept do not re-encode to the file's prefix")
		}
		whole := len(data) - len(data)%abortedEntryBytes
		if file.corrupt == nil && len(enc) != whole {
			t.Fatalf("kept %d of %d whole bytes with no corruption reported", len(enc), whole)
		}
		if file.torn != (len(data)%abortedEntryBytes != 0) {
			t.Fatalf("torn = %v for %d bytes", file.torn, len(data))
		}
		for i, e := range file.entries {
			if e.FirstOffset > e.LastOffset || i > 0 && e.LastOffset <= file.entries[i-1].LastOffset {
				t.Fatalf("invalid entry kept: %+v", e)
			}
		}
	})
}

func TestDecodeSnapshotRejectsTransactionAtOrAfterItsOffset(t *testing.T) {
	ps := producers.New()
	ps.UpdateCoordinator(1, 0, 7, 0, true) // a transaction from 7, no batch
	if _, err := decodeSnapshot(ps.Snapshot(), 8); err != nil {
		t.Fatalf("valid at 8: %v", err)
	}
	if _, err := decodeSnapshot(ps.Snapshot(), 7); err == nil {
		t.Fatal("a snapshot at 7 holding a transaction from 7 was accepted")
	}
}
