package record

import (
	"encoding/binary"
	"fmt"
)

// Transaction markers: a control batch (attributes transactional|control)
// holding one control record whose key is version (int16, 0) and type
// (int16: 0 ABORT, 1 COMMIT; Kafka's ControlRecordType) and whose value is
// version (int16, 0) and the coordinator epoch (int32), Kafka's
// EndTransactionMarker.
const (
	controlTypeAbort  = 0
	controlTypeCommit = 1
	markerKeySize     = 4
	markerValueSize   = 6
)

// EndTxnMarker is a transaction marker's content.
type EndTxnMarker struct {
	Commit           bool // COMMIT, else ABORT
	CoordinatorEpoch int32
}

// AppendEndTxnMarker appends to dst a whole marker batch as Kafka's
// MemoryRecords.withEndTransactionMarker writes one: base offset 0 and
// partition leader epoch -1 (the appender sets both), attributes
// transactional|control, no compression, CreateTime timestampMs for the
// batch and its one record, the producer's id and epoch, base sequence -1,
// and a valid CRC.
func AppendEndTxnMarker(dst []byte, producerID int64, producerEpoch int16, m EndTxnMarker, timestampMs int64) []byte {
	start := len(dst)
	dst = AppendHeader(dst, Header{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attrTransactional | attrControl,
		BaseTimestamp:        timestampMs,
		MaxTimestamp:         timestampMs,
		ProducerID:           producerID,
		ProducerEpoch:        producerEpoch,
		BaseSequence:         -1,
		NumRecords:           1,
	})
	controlType := int16(controlTypeAbort)
	if m.Commit {
		controlType = controlTypeCommit
	}
	var key [markerKeySize]byte
	binary.BigEndian.PutUint16(key[2:], uint16(controlType))
	var value [markerValueSize]byte
	binary.BigEndian.PutUint32(value[2:], uint32(m.CoordinatorEpoch))
	dst = AppendRecord(dst, &Record{Key: key[:], Value: value[:]})
	if err := FinishBatch(dst[start:]); err != nil {
		panic("record: a marker batch cannot be too large: " + err.Error())
	}
	return dst
}

// ParseEndTxnMarker decodes the key and value of a control record as a
// transaction marker. It fails for a key that is not a version-0 COMMIT or
// ABORT (other control types, such as KRaft's, are not markers) or a value
// too short; bytes after the coordinator epoch (later value versions) are
// ignored, as Kafka does.
func ParseEndTxnMarker(key, value []byte) (EndTxnMarker, error) {
	if len(key) < markerKeySize {
		return EndTxnMarker{}, invalid("control record key of %d bytes", len(key))
	}
	var m EndTxnMarker
	switch t := int16(binary.BigEndian.Uint16(key[2:])); t {
	case controlTypeAbort:
	case controlTypeCommit:
		m.Commit = true
	default:
		return EndTxnMarker{}, invalid("control record type %d is not a transaction marker", t)
	}
	if len(value) < markerValueSize {
		return EndTxnMarker{}, invalid("transaction marker value of %d bytes, want at least %d", len(value), markerValueSize)
	}
	m.CoordinatorEpoch = int32(binary.BigEndian.Uint32(value[2:]))
	return m, nil
}

// String names the marker as Kafka logs it.
func (m EndTxnMarker) String() string {
	kind := "ABORT"
	if m.Commit {
		kind = "COMMIT"
	}
	return fmt.Sprintf("%s(coordinatorEpoch=%d)", kind, m.CoordinatorEpoch)
}
