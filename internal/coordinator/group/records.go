package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// Record schemas of __consumer_offsets, as Kafka writes them so that tools
// reading the topic understand it: key version 0/1 is an offset commit, key
// version 2 is group metadata. Values: OffsetCommitValue v3 (with leader
// epoch), GroupMetadataValue v3 (with static members). Replay also reads the
// other versions Kafka has written (values up to v4, flexible).
const (
	offsetKeyVersion   = 1
	groupKeyVersion    = 2
	offsetValueVersion = 3
	groupValueVersion  = 3
	maxValueVersion    = 4
)

// ErrBadRecord wraps every record that Replay cannot read.
var ErrBadRecord = errors.New("group: bad __consumer_offsets record")

func offsetKey(group string, tp base.TopicPartition) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetKeyVersion, Group: group, Topic: tp.Topic, Partition: tp.Partition}
	return k.AppendTo(nil)
}

func offsetValue(e offsetEntry) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetValueVersion
	v.Offset = int64(e.offset)
	v.LeaderEpoch = -1
	if e.hasEpoch {
		v.LeaderEpoch = int32(e.leaderEpoch)
	}
	v.Metadata = e.metadata
	v.CommitTimestamp = e.committed.UnixMilli()
	return v.AppendTo(nil)
}

func groupKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupKeyVersion, Group: group}
	return k.AppendTo(nil)
}

// metadataValue is the group as Kafka persists it.
func metadataValue(g *group) *kmsg.GroupMetadataValue {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	// A group with members has chosen a protocol, which may be named "":
	// Kafka persists that name as it is, and a replay refuses members
	// without a protocol.
	if g.protocol != "" || len(g.members) > 0 {
		v.Protocol = kmsg.StringPtr(g.protocol)
	}
	if g.leader != "" {
		v.Leader = kmsg.StringPtr(g.leader)
	}
	v.CurrentStateTimestamp = -1
	if g.hasStateSince {
		v.CurrentStateTimestamp = g.stateSince.UnixMilli()
	}
	for _, id := range g.order {
		m := g.members[id]
		sub, _ := m.metadataFor(g.protocol)
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID = m.id
		vm.InstanceID = m.instanceID
		vm.ClientID = m.clientID
		vm.ClientHost = m.clientHost
		vm.RebalanceTimeoutMillis = int32(m.rebalanceTimeout / time.Millisecond)
		vm.SessionTimeoutMillis = int32(m.sessionTimeout / time.Millisecond)
		vm.Subscription = nonNil(sub)
		vm.Assignment = nonNil(m.assignment)
		v.Members = append(v.Members, vm)
	}
	return &v
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// writeGroup persists the group's metadata.
func (c *Coordinator) writeGroup(g *group, res *runtime.Result) {
	v := metadataValue(g)
	g.persisted = v
	res.Records = append(res.Records, runtime.Record{Key: groupKey(g.id), Value: v.AppendTo(nil)})
}

func (c *Coordinator) writeGroupTombstone(g *group, res *runtime.Result) {
	g.persisted = nil
	res.Records = append(res.Records, runtime.Record{Key: groupKey(g.id)})
}

// nextOffsetOrder is the order of the offset-commit record about to be
// applied (written or replayed).
func (c *Coordinator) nextOffsetOrder() uint64 {
	c.offsetOrder++
	return c.offsetOrder
}

func (c *Coordinator) writeOffset(g *group, tp base.TopicPartition, e offsetEntry, res *runtime.Result) {
	e.order = c.nextOffsetOrder()
	g.offsets[tp] = e
	c.noteOffsetTopic(tp.Topic)
	res.Records = append(res.Records, runtime.Record{Key: offsetKey(g.id, tp), Value: offsetValue(e)})
}

// writeOffsetTombstone deletes the partition's offset: the committed one
// and, as Kafka's replay of a tombstone does, every producer's pending one.
func (c *Coordinator) writeOffsetTombstone(g *group, tp base.TopicPartition, res *runtime.Result) {
	delete(g.offsets, tp)
	c.dropTxnOffsetsAt(g, tp)
	res.Records = append(res.Records, runtime.Record{Key: offsetKey(g.id, tp)})
}

// Replay applies one record of the partition, in log order. It validates
// what it reads: a record it cannot decode is an error wrapping ErrBadRecord
// and leaves the state unchanged.
func (c *Coordinator) Replay(key, value []byte) error {
	if len(key) >= 2 && int16(binary.BigEndian.Uint16(key)) >= consumerGroupMetadataKeyType {
		return c.replayConsumerRecord(key, value)
	}
	okey, gkey, err := readKey(key)
	if err != nil {
		return err
	}
	if okey != nil {
		return c.replayOffset(*okey, value)
	}
	return c.replayGroup(gkey.Group, value)
}

// readKey decodes a record key: an offset commit's (okey) or a group's
// (gkey); exactly one is set when err is nil.
func readKey(key []byte) (okey *kmsg.OffsetCommitKey, gkey *kmsg.GroupMetadataKey, err error) {
	if len(key) < 2 {
		return nil, nil, fmt.Errorf("%w: key of %d bytes", ErrBadRecord, len(key))
	}
	switch v := int16(binary.BigEndian.Uint16(key)); v {
	case 0, 1:
		okey = new(kmsg.OffsetCommitKey)
		if err := okey.ReadFrom(key); err != nil {
			return nil, nil, fmt.Errorf("%w: offset commit key: %v", ErrBadRecord, err)
		}
		return okey, nil, nil
	case 2:
		gkey = new(kmsg.GroupMetadataKey)
		if err := gkey.ReadFrom(key); err != nil {
			return nil, nil, fmt.Errorf("%w: group metadata key: %v", ErrBadRecord, err)
		}
		return nil, gkey, nil
	default:
		return nil, nil, fmt.Errorf("%w: key version %d", ErrBadRecord, v)
	}
}

func valueVersion(value []byte) (int16, error) {
	if len(value) < 2 {
		return 0, fmt.Errorf("%w: value of %d bytes", ErrBadRecord, len(value))
	}
	v := int16(binary.BigEndian.Uint16(value))
	if v < 0 || v > maxValueVersion {
		return 0, fmt.Errorf("%w: value version %d", ErrBadRecord, v)
	}
	return v, nil
}

// loadedGroup returns the group a replayed record belongs to, creating it
// Empty. A loaded group has no state timestamp until its metadata says one.
func (c *Coordinator) loadedGroup(id string) *group {
	g, ok := c.groups[id]
	if !ok {
		g = newGroup(id, time.Time{})
		g.hasStateSince = false
		c.groups[id] = g
	}
	return g
}

// replayOffset applies a plain offset commit, or a tombstone: that deletes
// the committed offset and every pending one of the partition.
func (c *Coordinator) replayOffset(k kmsg.OffsetCommitKey, value []byte) error {
	tp := base.TopicPartition{Topic: k.Topic, Partition: k.Partition}
	if value == nil {
		if g, ok := c.groups[k.Group]; ok {
			delete(g.offsets, tp)
			c.dropTxnOffsetsAt(g, tp)
			c.dropIfGarbage(g)
		}
		return nil
	}
	if c.shares[k.Group] != nil {
		return fmt.Errorf("%w: an offset commit for share group %q", ErrBadRecord, k.Group)
	}
	e, err := readOffsetValue(value)
	if err != nil {
		return err
	}
	e.order = c.nextOffsetOrder()
	c.loadedGroup(k.Group).offsets[tp] = e
	c.noteOffsetTopic(tp.Topic)
	return nil
}

// readOffsetValue decodes an OffsetCommitValue; the entry has no order yet.
func readOffsetValue(value []byte) (offsetEntry, error) {
	if _, err := valueVersion(value); err != nil {
		return offsetEntry{}, err
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(value); err != nil {
		return offsetEntry{}, fmt.Errorf("%w: offset commit value: %v", ErrBadRecord, err)
	}
	e := offsetEntry{
		offset:    base.Offset(v.Offset),
		metadata:  v.Metadata,
		committed: time.UnixMilli(v.CommitTimestamp),
	}
	if v.Version >= 3 && v.LeaderEpoch >= 0 {
		e.leaderEpoch, e.hasEpoch = base.Epoch(v.LeaderEpoch), true
	}
	return e, nil
}

func (c *Coordinator) replayGroup(id string, value []byte) error {
	if g, ok := c.groups[id]; ok && g.consumer != nil {
		if value == nil {
			return nil // the classic metadata went when the group converted
		}
		return fmt.Errorf("%w: classic metadata for consumer group %q", ErrBadRecord, id)
	}
	if value != nil && c.shares[id] != nil {
		return fmt.Errorf("%w: classic metadata for share group %q", ErrBadRecord, id)
	}
	if value == nil {
		if g, ok := c.groups[id]; ok {
			c.groups[id] = newGroup(id, time.Time{})
			c.groups[id].hasStateSince = false
			c.groups[id].offsets = g.offsets
			c.groups[id].txnOffsets = g.txnOffsets
			c.dropIfGarbage(c.groups[id])
		}
		return nil
	}
	if _, err := valueVersion(value); err != nil {
		return err
	}
	v := new(kmsg.GroupMetadataValue)
	if err := v.ReadFrom(value); err != nil {
		return fmt.Errorf("%w: group metadata value: %v", ErrBadRecord, err)
	}
	if len(v.Members) > 0 && v.Protocol == nil {
		return fmt.Errorf("%w: group %q has members but no protocol", ErrBadRecord, id)
	}
	seen := make(map[string]bool, len(v.Members))
	for _, vm := range v.Members {
		if seen[vm.MemberID] {
			return fmt.Errorf("%w: group %q lists member %q twice", ErrBadRecord, id, vm.MemberID)
		}
		seen[vm.MemberID] = true
	}
	old := c.loadedGroup(id)
	g := newGroup(id, time.Time{})
	g.offsets = old.offsets
	g.txnOffsets = old.txnOffsets
	g.persisted = v
	g.generation = v.Generation
	g.protocolType = v.ProtocolType
	if v.Protocol != nil {
		g.protocol = *v.Protocol
	}
	g.hasStateSince = v.Version >= 2 && v.CurrentStateTimestamp >= 0
	if g.hasStateSince {
		g.stateSince = time.UnixMilli(v.CurrentStateTimestamp)
	}
	for _, vm := range v.Members {
		m := &member{
			id:               vm.MemberID,
			instanceID:       vm.InstanceID,
			clientID:         vm.ClientID,
			clientHost:       vm.ClientHost,
			sessionTimeout:   millis(vm.SessionTimeoutMillis),
			rebalanceTimeout: millis(vm.SessionTimeoutMillis),
			protocols:        []protocol{{name: g.protocol, metadata: vm.Subscription}},
			assignment:       vm.Assignment,
		}
		if v.Version >= 1 && vm.RebalanceTimeoutMillis > 0 {
			m.rebalanceTimeout = millis(vm.RebalanceTimeoutMillis)
		}
		g.addMember(m, v.ProtocolType)
	}
	if v.Leader != nil && g.members[*v.Leader] != nil {
		g.leader = *v.Leader
	}
	if len(g.members) > 0 {
		g.state = stateStable
	}
	g.computeSubscribed()
	c.groups[id] = g
	return nil
}
