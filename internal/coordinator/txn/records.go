package txn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Record schemas of __transaction_state, as Kafka writes them:
// TxnMetadataKey v0, and TxnMetadataValue v0 for a transaction of version
// 0, v1 (flexible, with the previous and next producer ids and the client
// transaction version as tagged fields) for one of version 2, whose state
// needs them.
const (
	keyVersion      = 0
	valueVersion    = 0
	maxValueVersion = 1
	// maxClientVersion is the highest transaction version a value may
	// name (Kafka's TV_2).
	maxClientVersion = 2
)

// ErrBadRecord wraps every record that Replay cannot read.
var ErrBadRecord = errors.New("txn: bad __transaction_state record")

func txnKey(id string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: id}
	return k.AppendTo(nil)
}

// txnValue is t as Kafka persists it (TransactionLog.valueToBytes): an
// Empty transaction has null partitions, the others a list by topic.
func txnValue(t *txnMetadata) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = valueVersion
	if t.clientVersion >= 2 || t.nextProducerID.ok {
		v.Version = 1
		v.PreviousProducerID = orMinusOne(t.lastProducerID)
		v.NextProducerID = orMinusOne(t.nextProducerID)
		v.ClientTransactionVersion = t.clientVersion
	}
	v.ProducerID = t.producerID
	v.ProducerEpoch = t.epoch
	v.TimeoutMillis = int32(t.timeout / time.Millisecond)
	v.State = t.state.wire()
	if t.state != stateEmpty {
		v.Topics = topicsOf(t.sortedPartitions())
	}
	v.LastUpdateTimestamp = t.lastUpdateMs
	v.StartTimestamp = orMinusOne(t.startMs)
	return v.AppendTo(nil)
}

// topicsOf groups sorted partitions by topic; never nil.
func topicsOf(tps []base.TopicPartition) []kmsg.TxnMetadataValueTopic {
	out := []kmsg.TxnMetadataValueTopic{}
	for _, tp := range tps {
		if n := len(out); n == 0 || out[n-1].Topic != tp.Topic {
			out = append(out, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
		}
		last := &out[len(out)-1]
		last.Partitions = append(last.Partitions, tp.Partition)
	}
	return out
}

// write persists t's current state.
func (c *Coordinator) write(t *txnMetadata, res *runtime.Result) {
	res.Records = append(res.Records, runtime.Record{Key: txnKey(t.id), Value: txnValue(t)})
}

// remove deletes the id and writes its tombstone.
func (c *Coordinator) remove(t *txnMetadata, nowMs int64, res *runtime.Result) {
	t.transitionTo(stateDead, nowMs)
	delete(c.txns, t.id)
	res.Records = append(res.Records, runtime.Record{Key: txnKey(t.id)})
}

// Replay applies one record of the partition, in log order. A record it
// cannot read is an error wrapping ErrBadRecord and changes nothing.
func (c *Coordinator) Replay(key, value []byte) error {
	id, err := readKey(key)
	if err != nil {
		return err
	}
	if value == nil {
		delete(c.txns, id)
		return nil
	}
	t, err := readValue(id, value)
	if err != nil {
		return err
	}
	c.txns[id] = t
	return nil
}

func readKey(key []byte) (string, error) {
	if len(key) < 2 {
		return "", fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v != keyVersion {
		return "", fmt.Errorf("%w: key version %d", ErrBadRecord, v)
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return "", fmt.Errorf("%w: key: %v", ErrBadRecord, err)
	}
	if n := len(k.AppendTo(nil)); n != len(key) {
		return "", fmt.Errorf("%w: key of %d bytes holds %d", ErrBadRecord, len(key), n)
	}
	if k.TransactionalID == "" {
		return "", fmt.Errorf("%w: empty transactional id", ErrBadRecord)
	}
	return k.TransactionalID, nil
}

// readValue decodes and validates a value: everything Kafka's coordinator
// writes passes, and what the invariants of doc.go forbid fails.
func readValue(id string, value []byte) (*txnMetadata, error) {
	if len(value) < 2 {
		return nil, fmt.Errorf("%w: value of %d bytes for %q", ErrBadRecord, len(value), id)
	}
	if v := int16(binary.BigEndian.Uint16(value)); v < 0 || v > maxValueVersion {
		return nil, fmt.Errorf("%w: value version %d for %q", ErrBadRecord, v, id)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(value); err != nil {
		return nil, fmt.Errorf("%w: value for %q: %v", ErrBadRecord, id, err)
	}
	if v.Version == 0 {
		if n := len(v.AppendTo(nil)); n != len(value) {
			return nil, fmt.Errorf("%w: value of %d bytes for %q holds %d", ErrBadRecord, len(value), id, n)
		}
	}
	state, ok := stateFromWire(v.State)
	switch {
	case !ok || state == stateDead || state == statePrepareEpochFence:
		return nil, fmt.Errorf("%w: %q in state %d", ErrBadRecord, id, v.State)
	case v.ProducerID < 0 || v.ProducerEpoch < 0:
		return nil, fmt.Errorf("%w: %q has producer id %d epoch %d", ErrBadRecord, id, v.ProducerID, v.ProducerEpoch)
	case state == stateOngoing && v.ProducerEpoch == math.MaxInt16:
		return nil, fmt.Errorf("%w: %q is Ongoing with epoch %d, which cannot be fenced", ErrBadRecord, id, v.ProducerEpoch)
	case v.TimeoutMillis <= 0:
		return nil, fmt.Errorf("%w: %q has timeout %dms", ErrBadRecord, id, v.TimeoutMillis)
	case (state == stateOngoing || state.preparing()) && v.StartTimestamp < 0:
		return nil, fmt.Errorf("%w: %q is %v without a start time", ErrBadRecord, id, state)
	case v.Version >= 1 && (v.ClientTransactionVersion < 0 || v.ClientTransactionVersion > maxClientVersion):
		return nil, fmt.Errorf("%w: %q has client transaction version %d", ErrBadRecord, id, v.ClientTransactionVersion)
	case v.Version >= 1 && v.NextProducerID >= 0 && !state.preparing():
		return nil, fmt.Errorf("%w: %q is %v with a next producer id", ErrBadRecord, id, state)
	}
	t := &txnMetadata{
		id:           id,
		producerID:   v.ProducerID,
		epoch:        v.ProducerEpoch,
		timeout:      time.Duration(v.TimeoutMillis) * time.Millisecond,
		state:        state,
		partitions:   map[base.TopicPartition]struct{}{},
		lastUpdateMs: v.LastUpdateTimestamp,
	}
	if v.StartTimestamp >= 0 {
		t.startMs = some(v.StartTimestamp)
	}
	if v.Version >= 1 {
		t.clientVersion = v.ClientTransactionVersion
		if v.PreviousProducerID >= 0 {
			t.lastProducerID = some(v.PreviousProducerID)
		}
		if v.NextProducerID >= 0 {
			t.nextProducerID = some(v.NextProducerID)
		}
	}
	if state == stateEmpty {
		return t, nil // Kafka ignores the partitions of an Empty value
	}
	for _, vt := range v.Topics {
		if vt.Topic == "" {
			return nil, fmt.Errorf("%w: %q lists a partition of an unnamed topic", ErrBadRecord, id)
		}
		for _, p := range vt.Partitions {
			if p < 0 {
				return nil, fmt.Errorf("%w: %q lists partition %d of %q", ErrBadRecord, id, p, vt.Topic)
			}
			t.partitions[base.TopicPartition{Topic: vt.Topic, Partition: p}] = struct{}{}
		}
	}
	if len(t.partitions) > 0 && state.idle() {
		return nil, fmt.Errorf("%w: %q is %v with partitions", ErrBadRecord, id, state)
	}
	return t, nil
}
