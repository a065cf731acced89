package tier

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// The transaction index of a remote segment (SuffixTxnIndex) is Kafka's
// .txnindex: one 34-byte entry per aborted transaction, big-endian
// {version int16 (0), producerId int64, firstOffset int64, lastOffset
// int64, lastStableOffset int64}, with absolute offsets. As in Kafka, an
// entry lives in the index of the segment that holds its ABORT marker
// (lastOffset), so the indexes of a partition's segments are disjoint and
// together list each aborted transaction once; firstOffset may lie in an
// earlier segment. The object is written only when it has an entry (Kafka
// uploads a .txnindex only where the segment has one), and a missing
// object reads as no entry.
const (
	txnEntryBytes   = 34
	txnIndexVersion = 0
)

// AbortedTxn is one transaction index entry, as Kafka's AbortedTxn: the
// producer's transactional batches in [FirstOffset, LastOffset]
// (inclusive; LastOffset is the ABORT marker's offset) are aborted.
// LastStableOffset is the partition's last stable offset right after the
// marker. It has the fields of partition.AbortedTxn, so either converts
// to the other.
type AbortedTxn struct {
	ProducerID       base.ProducerID
	FirstOffset      base.Offset
	LastOffset       base.Offset
	LastStableOffset base.Offset
}

// checkTxnIndex checks the invariants of the transaction index of the
// remote segment holding markers: producer id and offsets non-negative,
// FirstOffset <= LastOffset, each LastOffset in markers and strictly
// above the one before. The copier checks what it uploads, the reader
// what it reads.
func checkTxnIndex(ts []AbortedTxn, markers base.Range) error {
	for i, t := range ts {
		switch {
		case t.ProducerID < 0 || t.FirstOffset < 0 || t.LastStableOffset < 0:
			return fmt.Errorf("entry %d %+v: a negative field", i, t)
		case t.FirstOffset > t.LastOffset:
			return fmt.Errorf("entry %d %+v: first offset above last offset", i, t)
		case !markers.Contains(t.LastOffset):
			return fmt.Errorf("entry %d %+v: marker outside the segment %v", i, t, markers)
		case i > 0 && t.LastOffset <= ts[i-1].LastOffset:
			return fmt.Errorf("entry %d %+v: marker not above the previous entry's %d", i, t, ts[i-1].LastOffset)
		}
	}
	return nil
}

// encodeTxnIndex is ts in Kafka's layout; nil when ts is empty.
func encodeTxnIndex(ts []AbortedTxn) []byte {
	if len(ts) == 0 {
		return nil
	}
	be := binary.BigEndian
	out := make([]byte, 0, len(ts)*txnEntryBytes)
	for _, t := range ts {
		out = be.AppendUint16(out, txnIndexVersion)
		out = be.AppendUint64(out, uint64(t.ProducerID))
		out = be.AppendUint64(out, uint64(t.FirstOffset))
		out = be.AppendUint64(out, uint64(t.LastOffset))
		out = be.AppendUint64(out, uint64(t.LastStableOffset))
	}
	return out
}

// decodeTxnIndex is the gateway for a transaction index object read from
// key, of the segment holding markers: whole entries of version 0 that
// pass checkTxnIndex, or an error wrapping ErrCorruptObject.
func decodeTxnIndex(key string, b []byte, markers base.Range) ([]AbortedTxn, error) {
	if len(b)%txnEntryBytes != 0 {
		return nil, corruptf(key, "transaction index of %d bytes is not a multiple of %d", len(b), txnEntryBytes)
	}
	be := binary.BigEndian
	ts := make([]AbortedTxn, 0, len(b)/txnEntryBytes)
	for i := 0; i < len(b); i += txnEntryBytes {
		e := b[i : i+txnEntryBytes]
		if v := be.Uint16(e); v != txnIndexVersion {
			return nil, corruptf(key, "transaction index entry %d has version %d", len(ts), v)
		}
		ts = append(ts, AbortedTxn{
			ProducerID:       base.ProducerID(be.Uint64(e[2:])),
			FirstOffset:      base.Offset(be.Uint64(e[10:])),
			LastOffset:       base.Offset(be.Uint64(e[18:])),
			LastStableOffset: base.Offset(be.Uint64(e[26:])),
		})
	}
	if err := checkTxnIndex(ts, markers); err != nil {
		return nil, corruptf(key, "transaction index: %v", err)
	}
	return ts, nil
}

// TxnIndex returns the aborted transactions whose ABORT marker is in the
// COPY_FINISHED segment seg, ascending by marker offset: its transaction
// index, fetched and checked (ErrCorruptObject names the key), and kept
// in the index cache. A segment without the object (none of its
// transactions aborted, or uploaded before transaction indexes were)
// has none: nil. A segment in any other state is ErrNotReadable: its
// upload may not have written the object yet.
func (r *Reader) TxnIndex(ctx context.Context, seg remotemeta.RemoteSegment) ([]AbortedTxn, error) {
	if seg.State != remotemeta.CopyFinished {
		return nil, fmt.Errorf("%w: transaction index of %v segment %v", ErrNotReadable, seg.State, seg.ID)
	}
	// An entry per ABORT marker, a batch of its own: r.index's limit of
	// one entry per batch holds.
	v, err := r.index(ctx, seg, SuffixTxnIndex, txnEntryBytes, func(key string, b []byte) (any, error) {
		return decodeTxnIndex(key, b, seg.Range)
	})
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ts := v.([]AbortedTxn)
	if len(ts) == 0 {
		return nil, nil
	}
	return slices.Clone(ts), nil // the cache's copy is never mutated
}
