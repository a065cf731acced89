package offsets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/record"
)

// TopicName is the internal topic of consumer-group state.
const TopicName = "__consumer_offsets"

// readMaxBytes bounds one ReadFrom; the runtime calls again until next ==
// from, so this only bounds memory, not what a load can read.
const readMaxBytes = 1 << 20

// Adapter is one __consumer_offsets partition seen by the runtime. It is
// used from the runtime's goroutine for that partition only.
type Adapter struct {
	p     *partition.Partition
	clock clock.Clock
	buf   []byte
	rr    record.RecordReader
}

var (
	_ runtime.Log      = (*Adapter)(nil)
	_ runtime.Appender = (*Adapter)(nil)
)

// New adapts p, which must be a __consumer_offsets partition led here.
func New(p *partition.Partition, clk clock.Clock) *Adapter {
	return &Adapter{p: p, clock: clk}
}

// ReadFrom implements runtime.Log.
func (a *Adapter) ReadFrom(from base.Offset) ([]runtime.Record, base.Offset, error) {
	if start := a.p.Offsets().LogStart; from < start {
		from = start
	}
	// To the log end, not the high watermark, as Kafka's coordinators load
	// (FetchIsolation.LOG_END): a new leader learned its high watermark
	// from the old one a fetch late, and its whole log is what every
	// replica will hold. Stopping at the high watermark could drop the
	// last state change the old coordinator made durable and answered
	// (a PrepareCommit), and abort a committed transaction.
	res, err := a.p.ReadIsolated(from, readMaxBytes, a.buf[:0], partition.ReadLogEnd)
	if err != nil {
		return nil, from, classify(err)
	}
	a.buf = res.Buf
	next := from
	var out []runtime.Record
	it := record.SplitBatches(res.Records)
	for {
		batch, h, ok := it.Next()
		if !ok {
			break
		}
		if h.NextOffset() <= from {
			continue
		}
		next = h.NextOffset()
		var txn *runtime.Producer
		if h.Transactional() {
			txn = &runtime.Producer{ID: h.ProducerID, Epoch: h.ProducerEpoch}
		}
		if err := a.rr.Reset(batch); err != nil {
			return nil, from, fmt.Errorf("offsets: batch at %d of %v: %w", h.BaseOffset, a.p.TP(), err)
		}
		for {
			rec, ok := a.rr.Next()
			if !ok {
				break
			}
			if h.BaseOffset+base.Offset(rec.OffsetDelta) < from {
				continue
			}
			if h.Control() {
				m, err := readMarker(h, rec.Key, rec.Value)
				if err != nil {
					return nil, from, fmt.Errorf("offsets: batch at %d of %v: %w", h.BaseOffset, a.p.TP(), err)
				}
				out = append(out, runtime.Record{Marker: m})
				continue
			}
			out = append(out, runtime.Record{Key: bytes.Clone(rec.Key), Value: bytes.Clone(rec.Value), Txn: txn})
		}
		if err := a.rr.Err(); err != nil {
			return nil, from, fmt.Errorf("offsets: batch at %d of %v: %w", h.BaseOffset, a.p.TP(), err)
		}
	}
	if err := it.Err(); err != nil {
		return nil, from, fmt.Errorf("offsets: reading %v at %d: %w", a.p.TP(), from, err)
	}
	return out, next, nil
}

// Append implements runtime.Appender.
func (a *Adapter) Append(recs []runtime.Record) (func() error, error) {
	if len(recs) == 0 {
		panic("offsets: Append of no records")
	}
	batch := EncodeBatch(recs, a.clock.Now().UnixMilli())
	// As the coordinator's own batch: its wait covers the ISR, not only
	// the local fdatasync, so no commit is answered before it is committed.
	_, wait, err := a.p.AppendFromCoordinator(batch)
	return durable(wait, err)
}

// AppendTxn implements runtime.TxnAppender: recs as one transactional
// batch of producer p, as Kafka's coordinator writes TxnOffsetCommit
// records (no sequence numbers; the partition checks p's epoch).
func (a *Adapter) AppendTxn(p runtime.Producer, recs []runtime.Record) (func() error, error) {
	if len(recs) == 0 {
		panic("offsets: AppendTxn of no records")
	}
	batch := encodeBatch(recs, a.clock.Now().UnixMilli(), &p)
	_, wait, err := a.p.AppendFromCoordinator(batch)
	return durable(wait, err)
}

// AppendMarker implements runtime.TxnAppender.
func (a *Adapter) AppendMarker(m runtime.Marker) (func() error, error) {
	_, wait, err := a.p.AppendMarker(base.ProducerID(m.Producer.ID), m.Producer.Epoch, m.Commit, m.CoordinatorEpoch)
	return durable(wait, err)
}

// durable is an append's wait, with errors classified for the runtime.
func durable(wait func() error, err error) (func() error, error) {
	if err != nil {
		return nil, classify(err)
	}
	if wait == nil {
		return func() error { return nil }, nil
	}
	return func() error { return classify(wait()) }, nil
}

// classify makes a partition this broker no longer leads (closed, or made
// a follower) the runtime's ErrNotLeader, which resigns the coordinator
// and answers its clients NOT_COORDINATOR.
func classify(err error) error {
	if errors.Is(err, partition.ErrClosed) || errors.Is(err, partition.ErrNotLeader) {
		return fmt.Errorf("%w: %w", runtime.ErrNotLeader, err)
	}
	return err
}

// EncodeBatch returns recs as one uncompressed v2 record batch at base
// offset 0 with a valid CRC: no producer id, every record stamped tsMs.
func EncodeBatch(recs []runtime.Record, tsMs int64) []byte {
	return encodeBatch(recs, tsMs, nil)
}

// encodeBatch is EncodeBatch, transactional for txn when it is set.
func encodeBatch(recs []runtime.Record, tsMs int64, txn *runtime.Producer) []byte {
	var raw, rec []byte
	for i, r := range recs {
		rec = rec[:0]
		rec = append(rec, 0) // attributes
		rec = binary.AppendVarint(rec, 0)
		rec = binary.AppendVarint(rec, int64(i))
		rec = appendVarBytes(rec, r.Key)
		rec = appendVarBytes(rec, r.Value)
		rec = binary.AppendVarint(rec, 0) // no headers
		raw = binary.AppendVarint(raw, int64(len(rec)))
		raw = append(raw, rec...)
	}
	rb := kmsg.RecordBatch{
		Length:               int32(record.HeaderSize - record.LogOverhead + len(raw)),
		PartitionLeaderEpoch: -1,
		Magic:                2,
		LastOffsetDelta:      int32(len(recs) - 1),
		FirstTimestamp:       tsMs,
		MaxTimestamp:         tsMs,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(recs)),
		Records:              raw,
	}
	if txn != nil {
		rb.Attributes = attrTransactional
		rb.ProducerID, rb.ProducerEpoch = txn.ID, txn.Epoch
	}
	b := rb.AppendTo(nil)
	record.WriteCRC(b)
	return b
}

// appendVarBytes appends b with a varint length; nil is length -1.
func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// PartitionFor is Kafka's partition of a group id: the absolute value of
// Java's String.hashCode (0 for Integer.MIN_VALUE) modulo the partition
// count. Clients do not compute it, but tools that read the topic expect a
// group's records in this partition.
func PartitionFor(groupID string, partitions int32) int32 {
	if partitions < 1 {
		panic("offsets: PartitionFor with no partitions")
	}
	var h int32
	for _, u := range utf16.Encode([]rune(groupID)) {
		h = 31*h + int32(u)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}
