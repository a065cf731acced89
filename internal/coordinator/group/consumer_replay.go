package group

import (
	"fmt"
	"time"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/reconcile"
)

// replayConsumer applies one consumer group record (value nil: a
// tombstone) to cg, the group of k.Group (nil while it has none), and
// returns the group after it: nil when a tombstone deleted it. As in
// Kafka, a record with a value creates the group (and a member record its
// member), a tombstone for what does not exist is ignored, and a member
// goes in the order its records are written: its assignment, then its
// target, then the member. A record that does not decode, or breaks that
// order or the group's invariants, is an error wrapping ErrBadRecord, and
// changes nothing.
func replayConsumer(cg *consumerGroup, k consumerKey, value []byte) (*consumerGroup, error) {
	if value == nil {
		return replayConsumerTombstone(cg, k)
	}
	before := cg
	if cg == nil {
		cg = newConsumerGroup()
	}
	var err error
	switch k.Type {
	case consumerGroupMetadataKeyType:
		err = cg.replayMetadata(value)
	case memberMetadataKeyType:
		err = cg.replayMember(k.Member, value)
	case targetAssignmentMetadataKeyType:
		var v targetAssignmentMetadata
		if v, err = readTargetAssignmentMetadataValue(value); err == nil {
			cg.assignmentEpoch = v.AssignmentEpoch
		}
	case targetAssignmentMemberKeyType:
		var v targetAssignmentMember
		if v, err = readTargetAssignmentMemberValue(value); err == nil {
			cg.targets[k.Member] = assignmentOf(v.TopicPartitions)
		}
	case currentMemberAssignmentKeyType:
		err = cg.replayCurrentAssignment(k.Member, value)
	case regularExpressionKeyType:
		var v regularExpression
		if v, err = readRegularExpressionValue(value); err == nil {
			cg.regexes[k.Regex] = v
		}
	default:
		err = fmt.Errorf("%w: key type %d is not a consumer group record's", ErrBadRecord, k.Type)
	}
	if err != nil {
		return before, err
	}
	return cg, nil
}

func replayConsumerTombstone(cg *consumerGroup, k consumerKey) (*consumerGroup, error) {
	if cg == nil {
		return nil, nil
	}
	switch k.Type {
	case consumerGroupMetadataKeyType:
		if len(cg.members) != 0 {
			return cg, fmt.Errorf("%w: consumer group %q deleted with %d members", ErrBadRecord, k.Group, len(cg.members))
		}
		return nil, nil
	case memberMetadataKeyType:
		m, ok := cg.members[k.Member]
		switch {
		case !ok:
		case m.Epoch != leaveEpoch:
			return cg, fmt.Errorf("%w: member %q of consumer group %q deleted before its assignment", ErrBadRecord, k.Member, k.Group)
		case cg.targets[k.Member] != nil:
			return cg, fmt.Errorf("%w: member %q of consumer group %q deleted before its target assignment", ErrBadRecord, k.Member, k.Group)
		default:
			if m.instanceID != nil && cg.static[*m.instanceID] == m.id {
				delete(cg.static, *m.instanceID)
			}
			cg.countSubscription(m, -1)
			delete(cg.members, k.Member)
		}
	case targetAssignmentMetadataKeyType:
		cg.assignmentEpoch = -1
	case targetAssignmentMemberKeyType:
		delete(cg.targets, k.Member)
	case currentMemberAssignmentKeyType:
		if m, ok := cg.members[k.Member]; ok {
			cg.releasePartitions(m)
			m.Member, m.assignedSince = leftMember(), nil
		}
	case regularExpressionKeyType:
		delete(cg.regexes, k.Regex)
	default:
		return cg, fmt.Errorf("%w: key type %d is not a consumer group record's", ErrBadRecord, k.Type)
	}
	return cg, nil
}

// leftMember is the reconciliation state of a member whose assignment
// was deleted: it holds nothing, at the leave epoch.
func leftMember() reconcile.Member {
	return reconcile.Member{Epoch: leaveEpoch, PreviousEpoch: leaveEpoch, State: reconcile.Stable,
		Assigned: assignor.Assignment{}, PendingRevocation: assignor.Assignment{}}
}

func (cg *consumerGroup) replayMetadata(value []byte) error {
	v, err := readConsumerGroupMetadataValue(value)
	if err != nil {
		return err
	}
	cg.epoch, cg.metadataHash = v.Epoch, v.MetadataHash
	cg.hasCreated = v.HasCreationTime
	if v.HasCreationTime {
		cg.created = time.UnixMilli(v.CreationTimeMs)
	}
	return nil
}

// member is the group's member id, created (holding nothing, at epoch 0,
// as a member that is joining) if it has none.
func (cg *consumerGroup) member(id string) *consumerMember {
	m, ok := cg.members[id]
	if !ok {
		m = newConsumerMember(id)
		cg.members[id] = m
	}
	return m
}

func newConsumerMember(id string) *consumerMember {
	return &consumerMember{id: id, Member: reconcile.Member{State: reconcile.Stable,
		Assigned: assignor.Assignment{}, PendingRevocation: assignor.Assignment{}}}
}

func (cg *consumerGroup) replayMember(id string, value []byte) error {
	v, err := readMemberMetadataValue(value)
	if err != nil {
		return err
	}
	m := cg.member(id)
	if m.instanceID != nil && cg.static[*m.instanceID] == id {
		delete(cg.static, *m.instanceID)
	}
	cg.countSubscription(m, -1)
	defer cg.countSubscription(m, 1)
	m.instanceID, m.rackID = v.InstanceID, v.RackID
	m.clientID, m.clientHost = v.ClientID, v.ClientHost
	m.topics, m.regex = v.SubscribedTopicNames, v.SubscribedTopicRegex
	m.rebalanceTimeout = time.Duration(v.RebalanceTimeoutMs) * time.Millisecond
	m.serverAssignor, m.classic = v.ServerAssignor, v.Classic
	if m.instanceID != nil {
		cg.static[*m.instanceID] = id
	}
	return nil
}

func (cg *consumerGroup) replayCurrentAssignment(id string, value []byte) error {
	v, err := readCurrentMemberAssignmentValue(value)
	if err != nil {
		return err
	}
	next := reconcile.Member{
		Epoch:             v.MemberEpoch,
		PreviousEpoch:     v.PreviousMemberEpoch,
		State:             reconcile.StateOf(v.State),
		Assigned:          assignmentOf(v.AssignedPartitions),
		PendingRevocation: assignmentOf(v.PartitionsPendingRevocation),
	}
	m, ok := cg.members[id]
	if !ok {
		m = newConsumerMember(id)
	}
	if err := cg.setAssignment(m, next); err != nil {
		return fmt.Errorf("%w: member %q: %v", ErrBadRecord, id, err)
	}
	cg.members[id] = m
	return nil
}
