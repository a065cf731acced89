package producers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"

	"github.com/strata-broker/strata/internal/base"
)

// Snapshot layout, all big-endian:
//
//	magic    [4]byte "SPST"
//	version  uint16  (2; Restore also reads 1)
//	crc      uint32  CRC-32C (Castagnoli) of everything after this field
//	count    uint32  number of entries
//	entries, ascending by producer id, each:
//	  version 2: producerID int64, epoch int16, lastTimestampMs int64,
//	             coordinatorEpoch int32, txnFirstOffset int64 (-1: no open
//	             transaction), batches uint8 (0..MaxBatches)
//	  version 1: producerID int64, epoch int16, lastTimestampMs int64,
//	             batches uint8 (1..MaxBatches)
//	  then per batch: firstSeq int32, lastSeq int32, firstOffset int64,
//	  lastOffset int64, timestampMs int64
const (
	snapshotVersion = 2
	headerSize      = 4 + 2 + 4 + 4
	crcEnd          = 4 + 2 + 4
	entrySizeV1     = 8 + 2 + 8 + 1
	entrySize       = 8 + 2 + 8 + 4 + 8 + 1
	batchSize       = 4 + 4 + 8 + 8 + 8
	// noTxnOnDisk is how a snapshot says "no open transaction"; it exists
	// only in the bytes.
	noTxnOnDisk = -1
)

var snapshotMagic = [4]byte{'S', 'P', 'S', 'T'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptSnapshot is wrapped by every error Restore returns.
var ErrCorruptSnapshot = errors.New("producers: corrupt snapshot")

// Snapshot encodes s in the current version. The encoding is
// deterministic: equal states give equal bytes.
func (s *State) Snapshot() []byte {
	entries := s.Entries()
	size := headerSize
	for _, e := range entries {
		size += entrySize + len(e.Batches)*batchSize
	}
	buf := make([]byte, headerSize, size)
	copy(buf, snapshotMagic[:])
	binary.BigEndian.PutUint16(buf[4:], snapshotVersion)
	binary.BigEndian.PutUint32(buf[crcEnd:], uint32(len(entries)))
	for _, e := range entries {
		txnFirst := int64(noTxnOnDisk)
		if o, ok := e.CurrentTxnFirstOffset.Get(); ok {
			txnFirst = int64(o)
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.ProducerID))
		buf = binary.BigEndian.AppendUint16(buf, uint16(e.Epoch))
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.LastTimestampMs))
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.CoordinatorEpoch))
		buf = binary.BigEndian.AppendUint64(buf, uint64(txnFirst))
		buf = append(buf, uint8(len(e.Batches)))
		for _, b := range e.Batches {
			buf = appendBatch(buf, b)
		}
	}
	binary.BigEndian.PutUint32(buf[6:], crc32.Checksum(buf[crcEnd:], castagnoli))
	return buf
}

func appendBatch(buf []byte, b BatchMeta) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(b.FirstSeq))
	buf = binary.BigEndian.AppendUint32(buf, uint32(b.LastSeq))
	buf = binary.BigEndian.AppendUint64(buf, uint64(b.FirstOffset))
	buf = binary.BigEndian.AppendUint64(buf, uint64(b.LastOffset))
	return binary.BigEndian.AppendUint64(buf, uint64(b.TimestampMs))
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorruptSnapshot, fmt.Sprintf(format, args...))
}

// Restore decodes a Snapshot of version 1 or 2. It is a gateway: it checks
// the magic, version, checksum, every length against the bytes present,
// and the invariants of each entry, and rejects trailing bytes.
func Restore(data []byte) (*State, error) {
	if len(data) < headerSize {
		return nil, corrupt("%d bytes, shorter than the %d-byte header", len(data), headerSize)
	}
	if [4]byte(data[:4]) != snapshotMagic {
		return nil, corrupt("bad magic %q", data[:4])
	}
	version := binary.BigEndian.Uint16(data[4:])
	if version != 1 && version != snapshotVersion {
		return nil, corrupt("unsupported version %d", version)
	}
	if want, got := binary.BigEndian.Uint32(data[6:]), crc32.Checksum(data[crcEnd:], castagnoli); want != got {
		return nil, corrupt("checksum %08x, computed %08x", want, got)
	}
	count := binary.BigEndian.Uint32(data[crcEnd:])
	r := data[headerSize:]
	fixed := entrySize
	if version == 1 {
		fixed = entrySizeV1
	}
	// Check the count against the bytes before allocating from it.
	if uint64(count)*uint64(fixed) > uint64(len(r)) {
		return nil, corrupt("%d entries cannot fit in %d bytes", count, len(r))
	}
	s := &State{producers: make(map[base.ProducerID]*Entry, count)}
	prev := base.ProducerID(math.MinInt64)
	for i := range count {
		e, n, rest, err := decodeEntry(r, version)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		r = rest
		if i > 0 && e.ProducerID <= prev {
			return nil, corrupt("entry %d: producer id %d not above %d", i, e.ProducerID, prev)
		}
		prev = e.ProducerID
		if len(r) < n*batchSize {
			return nil, corrupt("producer %d: batches truncated", e.ProducerID)
		}
		if n > 0 {
			e.Batches = make([]BatchMeta, n)
		}
		for j := range e.Batches {
			e.Batches[j] = BatchMeta{
				FirstSeq:    int32(binary.BigEndian.Uint32(r)),
				LastSeq:     int32(binary.BigEndian.Uint32(r[4:])),
				FirstOffset: base.Offset(binary.BigEndian.Uint64(r[8:])),
				LastOffset:  base.Offset(binary.BigEndian.Uint64(r[16:])),
				TimestampMs: int64(binary.BigEndian.Uint64(r[24:])),
			}
			r = r[batchSize:]
		}
		if err := validateEntry(e); err != nil {
			return nil, err
		}
		s.producers[e.ProducerID] = e
		if first, ok := e.CurrentTxnFirstOffset.Get(); ok {
			s.ongoing = append(s.ongoing, OpenTxn{ProducerID: e.ProducerID, FirstOffset: first})
		}
	}
	if len(r) != 0 {
		return nil, corrupt("%d trailing bytes", len(r))
	}
	slices.SortFunc(s.ongoing, cmpOpenTxn)
	return s, nil
}

// decodeEntry decodes the fixed part of one entry of the given version and
// returns it, its batch count (checked against the version's range) and
// the bytes after the fixed part.
func decodeEntry(r []byte, version uint16) (*Entry, int, []byte, error) {
	be := binary.BigEndian
	if version == 1 {
		if len(r) < entrySizeV1 {
			return nil, 0, nil, corrupt("truncated")
		}
		e := &Entry{
			ProducerID:       base.ProducerID(be.Uint64(r)),
			Epoch:            int16(be.Uint16(r[8:])),
			LastTimestampMs:  int64(be.Uint64(r[10:])),
			CoordinatorEpoch: NoCoordinatorEpoch, // version 1 predates markers
		}
		n := int(r[18])
		if n < 1 || n > MaxBatches {
			return nil, 0, nil, corrupt("producer %d: %d batches, want 1..%d", e.ProducerID, n, MaxBatches)
		}
		return e, n, r[entrySizeV1:], nil
	}
	if len(r) < entrySize {
		return nil, 0, nil, corrupt("truncated")
	}
	e := &Entry{
		ProducerID:       base.ProducerID(be.Uint64(r)),
		Epoch:            int16(be.Uint16(r[8:])),
		LastTimestampMs:  int64(be.Uint64(r[10:])),
		CoordinatorEpoch: int32(be.Uint32(r[18:])),
	}
	switch txnFirst := int64(be.Uint64(r[22:])); {
	case txnFirst >= 0:
		e.CurrentTxnFirstOffset = SomeOffset(base.Offset(txnFirst))
	case txnFirst != noTxnOnDisk:
		return nil, 0, nil, corrupt("producer %d: transaction first offset %d", e.ProducerID, txnFirst)
	}
	n := int(r[30])
	if n > MaxBatches {
		return nil, 0, nil, corrupt("producer %d: %d batches, want 0..%d", e.ProducerID, n, MaxBatches)
	}
	return e, n, r[entrySize:], nil
}

func validateEntry(e *Entry) error {
	if e.ProducerID < 0 || e.Epoch < 0 || e.CoordinatorEpoch < NoCoordinatorEpoch {
		return corrupt("producer %d epoch %d coordinator epoch %d: negative", e.ProducerID, e.Epoch, e.CoordinatorEpoch)
	}
	for j, b := range e.Batches {
		if b.FirstSeq < 0 || b.LastSeq < 0 || b.FirstOffset < 0 || b.FirstOffset > b.LastOffset {
			return corrupt("producer %d batch %d: %+v", e.ProducerID, j, b)
		}
		if j > 0 && b.FirstOffset <= e.Batches[j-1].LastOffset {
			return corrupt("producer %d batch %d: offsets not ascending", e.ProducerID, j)
		}
	}
	return nil
}
