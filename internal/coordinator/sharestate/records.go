package sharestate

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/recordwire"
)

// Records of __share_group_state, byte for byte as Kafka writes them (the
// schemas share-coordinator/src/main/resources/common/message/Share*.json,
// which kmsg lacks).
//
// A key is its record type as an int16 (Kafka's CoordinatorRecordType,
// where other keys put a version), then GroupId (int16 length), TopicId (16
// bytes) and Partition (int32); keys are not flexible. A value is its
// version (0, the only one) as an int16, then its fields in flexible
// encoding: compact arrays (uvarint length+1) and a tagged-field section at
// the end of every struct, where DeliveryCompleteCount goes (tag 0) unless
// it is unknown (-1, its default).
//
//	ShareSnapshotValue: SnapshotEpoch int32, StateEpoch int32,
//	  LeaderEpoch int32, StartOffset int64, CreateTimestamp int64,
//	  WriteTimestamp int64, StateBatches, tags
//	ShareUpdateValue:   SnapshotEpoch int32, LeaderEpoch int32,
//	  StartOffset int64, StateBatches, tags
//	StateBatch:         FirstOffset int64, LastOffset int64,
//	  DeliveryState int8, DeliveryCount int16, tags
const (
	snapshotKeyType int16 = 0 // ShareSnapshotKey
	updateKeyType   int16 = 1 // ShareUpdateKey
	valueVersion    int16 = 0

	deliveryCompleteCountTag uint32 = 0

	// batchWireBytes is the size of one encoded StateBatch with no tags.
	batchWireBytes = 8 + 8 + 1 + 2 + 1
)

// ErrBadRecord wraps every record that Replay cannot read.
var ErrBadRecord = errors.New("sharestate: bad __share_group_state record")

// partitionKey names one share-partition: a share group's state of one
// topic partition.
type partitionKey struct {
	group     string
	topicID   base.TopicID
	partition int32
}

func (k partitionKey) String() string { return Key(k.group, k.topicID, k.partition) }

// comparePartitionKeys orders keys by group, topic id, then partition.
func comparePartitionKeys(a, b partitionKey) int {
	return cmp.Or(strings.Compare(a.group, b.group), bytes.Compare(a.topicID[:], b.topicID[:]), cmp.Compare(a.partition, b.partition))
}

// snapshotValue is ShareSnapshotValue: the whole persisted state of one
// share-partition.
type snapshotValue struct {
	snapshotEpoch    int32
	stateEpoch       int32
	leaderEpoch      int32
	start            optional[base.Offset]
	deliveryComplete optional[int32]
	createMs         int64
	writeMs          int64
	batches          []stateBatch
}

// updateValue is ShareUpdateValue: a delta to the last snapshot of its
// key. Kafka writes it for most writes; this coordinator only reads it.
// Its start offset, when absent, leaves the stored one; so does a leader
// epoch of -1. It carries no state epoch.
type updateValue struct {
	snapshotEpoch    int32
	leaderEpoch      int32
	start            optional[base.Offset]
	deliveryComplete optional[int32]
	batches          []stateBatch
}

// appendKey writes the key of a record of keyType for k.
func appendKey(keyType int16, k partitionKey) []byte {
	if len(k.group) > maxKeyStringBytes {
		panic(fmt.Sprintf("sharestate: group id of %d bytes in a key (requests are checked for %d)", len(k.group), maxKeyStringBytes))
	}
	dst := kbin.AppendInt16(nil, keyType)
	dst = kbin.AppendString(dst, k.group)
	dst = kbin.AppendUuid(dst, k.topicID)
	return kbin.AppendInt32(dst, k.partition)
}

func (v snapshotValue) appendTo(dst []byte) []byte {
	dst = kbin.AppendInt16(dst, valueVersion)
	dst = kbin.AppendInt32(dst, v.snapshotEpoch)
	dst = kbin.AppendInt32(dst, v.stateEpoch)
	dst = kbin.AppendInt32(dst, v.leaderEpoch)
	dst = kbin.AppendInt64(dst, startToWire(v.start))
	dst = kbin.AppendInt64(dst, v.createMs)
	dst = kbin.AppendInt64(dst, v.writeMs)
	dst = appendBatches(dst, v.batches)
	return appendCountTag(dst, v.deliveryComplete)
}

func appendBatches(dst []byte, batches []stateBatch) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(batches))
	for _, b := range batches {
		dst = kbin.AppendInt64(dst, b.firstOffset())
		dst = kbin.AppendInt64(dst, b.lastOffset())
		dst = kbin.AppendInt8(dst, int8(b.State))
		dst = kbin.AppendInt16(dst, b.Deliveries)
		dst = kbin.AppendUvarint(dst, 0) // no tagged fields
	}
	return dst
}

// appendCountTag ends a value: its tagged fields, where the delivery
// complete count goes unless it is unknown (Kafka's default, not written).
func appendCountTag(dst []byte, count optional[int32]) []byte {
	if !count.ok {
		return kbin.AppendUvarint(dst, 0)
	}
	return recordwire.AppendTags(dst, recordwire.Tag{Tag: deliveryCompleteCountTag, Body: kbin.AppendInt32(nil, count.v)})
}

// readKey decodes a key. A key of a type other than ShareSnapshot and
// ShareUpdate is returned with its type alone and no error: Kafka's loader
// skips such records (a leftover of an aborted upgrade), and so does Replay.
func readKey(key []byte) (int16, partitionKey, error) {
	r := newRecordReader("key", key)
	keyType := r.Int16("record type")
	if r.Err() != nil || (keyType != snapshotKeyType && keyType != updateKeyType) {
		return keyType, partitionKey{}, r.Err()
	}
	name := "ShareSnapshotKey"
	if keyType == updateKeyType {
		name = "ShareUpdateKey"
	}
	r = newRecordReader(name, key)
	r.Int16("record type")
	k := partitionKey{group: r.KeyString("GroupId"), topicID: r.UUID("TopicId"), partition: r.Int32("Partition")}
	if err := r.Done(); err != nil {
		return keyType, partitionKey{}, err
	}
	switch {
	case k.group == "":
		r.Fail("empty group id")
	case k.partition < 0:
		r.Fail("partition %d", k.partition)
	}
	return keyType, k, r.Err()
}

// newValueReader reads a value's version: Kafka refuses one outside the
// schema's valid versions, which are only 0.
func newValueReader(what string, value []byte) *recordReader {
	r := newRecordReader(what, value)
	if v := r.Int16("version"); r.Err() == nil && v != valueVersion {
		r.Fail("value version %d", v)
	}
	return r
}

func readSnapshotValue(value []byte) (snapshotValue, error) {
	r := newValueReader("ShareSnapshotValue", value)
	v := snapshotValue{
		snapshotEpoch: r.Int32("SnapshotEpoch"),
		stateEpoch:    r.Int32("StateEpoch"),
		leaderEpoch:   r.Int32("LeaderEpoch"),
	}
	v.start = r.start()
	v.createMs = r.Int64("CreateTimestamp")
	v.writeMs = r.Int64("WriteTimestamp")
	v.batches = r.batches()
	v.deliveryComplete = r.countTag()
	if err := r.Done(); err != nil {
		return snapshotValue{}, err
	}
	return v, nil
}

func readUpdateValue(value []byte) (updateValue, error) {
	r := newValueReader("ShareUpdateValue", value)
	v := updateValue{
		snapshotEpoch: r.Int32("SnapshotEpoch"),
		leaderEpoch:   r.Int32("LeaderEpoch"),
	}
	v.start = r.start()
	v.batches = r.batches()
	v.deliveryComplete = r.countTag()
	if err := r.Done(); err != nil {
		return updateValue{}, err
	}
	return v, nil
}

func (r *recordReader) start() optional[base.Offset] {
	wire := r.Int64("StartOffset")
	start, ok := startFromWire(wire)
	if r.Err() == nil && !ok {
		r.Fail("StartOffset %d", wire)
	}
	return start
}

// batches reads StateBatches, each validated as a request's would be.
func (r *recordReader) batches() []stateBatch {
	n := r.ArrayLen("StateBatches", batchWireBytes, false)
	if n == 0 {
		return nil
	}
	out := make([]stateBatch, 0, n)
	for range n {
		first, last := r.Int64("FirstOffset"), r.Int64("LastOffset")
		state, deliveries := r.Int8("DeliveryState"), r.Int16("DeliveryCount")
		r.tags(nil)
		if r.Err() != nil {
			return nil
		}
		b, err := batchFromWire(first, last, state, deliveries)
		if err != nil {
			r.Fail("%v", err)
			return nil
		}
		out = append(out, b)
	}
	return out
}

// countTag reads the tagged fields that end a value: DeliveryCompleteCount
// (tag 0, four bytes) when it is known.
func (r *recordReader) countTag() optional[int32] {
	var count optional[int32]
	r.tags(func(tag uint32, field *recordReader) bool {
		if tag != deliveryCompleteCountTag {
			return false
		}
		wire := field.Int32("DeliveryCompleteCount")
		c, ok := countFromWire(wire)
		if field.Err() == nil && !ok {
			field.Fail("DeliveryCompleteCount %d", wire)
		}
		count = c
		return true
	})
	return count
}

// Replay applies one record of the partition, in log order: a snapshot
// replaces the state of its key, an update is combined into it, and a
// snapshot tombstone deletes it. A record it cannot read is an error
// wrapping ErrBadRecord and changes nothing. Records of other types are
// skipped, as Kafka's loader skips them; so are tombstones of ShareUpdate
// keys, which Kafka never writes (its replay would fail on one): an update
// key going away removes no state.
func (c *Coordinator) Replay(key, value []byte) error {
	keyType, k, err := readKey(key)
	if err != nil {
		return err
	}
	switch {
	case keyType == snapshotKeyType && value == nil:
		delete(c.states, k)
	case keyType == snapshotKeyType:
		v, err := readSnapshotValue(value)
		if err != nil {
			return fmt.Errorf("%w (key %s)", err, k)
		}
		c.applySnapshot(k, v)
	case keyType == updateKeyType && value != nil:
		v, err := readUpdateValue(value)
		if err != nil {
			return fmt.Errorf("%w (key %s)", err, k)
		}
		c.applyUpdate(k, v)
	}
	return nil
}
