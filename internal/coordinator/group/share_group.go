package group

import (
	"fmt"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// shareGroupType is the ListGroups type, and protocol type, of a share group.
const shareGroupType = "share"

// shareMemberStable is the one state of a share member (Kafka's
// MemberState.STABLE): share groups have no revocation.
const shareMemberStable int8 = 0

// shareGroup is a KIP-932 share group, as Kafka's ShareGroup: its members,
// their subscriptions and the partitions they read from. Like a consumer
// group it changes only by replaying its records (shareWrite.write), so a
// coordinator that loads the records has the group that wrote them.
// Its share-partitions' delivery state lives with the partitions' leaders,
// not here.
//
// Invariants:
//   - targets holds only members' target assignments; a member's target
//     goes before the member (Kafka's tombstone order).
//   - subscribers counts the members subscribing to each topic name.
type shareGroup struct {
	epoch           int32
	metadataHash    int64
	assignmentEpoch int32
	members         map[string]*shareMember
	targets         map[string]assignor.Assignment
	subscribers     map[string]int
	// stateTopics are the partitions whose share-partition state may
	// exist (its ShareGroupStatePartitionMetadata): every partition a
	// target ever held, by topic. DeleteGroups deletes their state.
	stateTopics map[base.TopicID]shareTopicPartitions
}

// DeleteShareState is an effect of DeleteGroups on a share group: the
// broker deletes the share-partition state of these partitions from the
// share coordinator (best effort; Kafka deletes it before the group).
type DeleteShareState struct {
	Group  string
	Topics map[base.TopicID][]int32
}

// shareMember is one member of a share group. Its id is the client's own
// (share members name themselves).
type shareMember struct {
	id            string
	rackID        *string
	clientID      string
	clientHost    string
	topics        []string // ascending, without duplicates
	epoch         int32
	previousEpoch int32
	assigned      assignor.Assignment
	// session ends the member unless it heartbeats first
	// (group.share.session.timeout.ms). Not persisted: the first Tick
	// after a load arms it.
	session deadline
}

func newShareGroup() *shareGroup {
	return &shareGroup{members: map[string]*shareMember{}, targets: map[string]assignor.Assignment{}, subscribers: map[string]int{}}
}

// state is the group's ShareGroupDescribe and ListGroups state.
func (sg *shareGroup) state() string {
	if len(sg.members) == 0 {
		return "Empty"
	}
	return "Stable"
}

func (m *shareMember) metadata() shareMemberMetadata {
	return shareMemberMetadata{RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost, SubscribedTopicNames: m.topics}
}

func (a shareMemberMetadata) equal(b shareMemberMetadata) bool {
	return equalPtr(a.RackID, b.RackID) && a.ClientID == b.ClientID && a.ClientHost == b.ClientHost &&
		slices.Equal(a.SubscribedTopicNames, b.SubscribedTopicNames)
}

// replayShare applies one share group record (value nil: a tombstone) to
// sg, the group of k.Group (nil while there is none), and returns the group
// after it: nil when a tombstone deleted it. As for consumer groups, a
// record with a value creates the group and its member, a tombstone for
// what does not exist is ignored, and a member's tombstones come in
// Kafka's order: its assignment, its target, then the member. A record
// that does not decode or breaks that order is an error wrapping
// ErrBadRecord and changes nothing.
func replayShare(sg *shareGroup, k consumerKey, value []byte) (*shareGroup, error) {
	if value == nil {
		return replayShareTombstone(sg, k)
	}
	before := sg
	if sg == nil {
		sg = newShareGroup()
	}
	var err error
	switch k.Type {
	case shareGroupMetadataKeyType:
		var v shareGroupMetadata
		if v, err = readShareGroupMetadataValue(value); err == nil {
			sg.epoch, sg.metadataHash = v.Epoch, v.MetadataHash
		}
	case shareMemberMetadataKeyType:
		var v shareMemberMetadata
		if v, err = readShareMemberMetadataValue(value); err == nil {
			m := sg.member(k.Member)
			sg.subscribe(m.topics, -1)
			m.rackID, m.clientID, m.clientHost = v.RackID, v.ClientID, v.ClientHost
			m.topics = sortedSet(v.SubscribedTopicNames)
			sg.subscribe(m.topics, 1)
		}
	case shareTargetAssignmentMetadataKeyType:
		var v targetAssignmentMetadata
		if v, err = readTargetAssignmentMetadataValue(value); err == nil {
			sg.assignmentEpoch = v.AssignmentEpoch
		}
	case shareTargetAssignmentMemberKeyType:
		var v targetAssignmentMember
		if v, err = readTargetAssignmentMemberValue(value); err == nil {
			sg.targets[k.Member] = assignmentOf(v.TopicPartitions)
		}
	case shareCurrentMemberAssignmentKeyType:
		var v shareCurrentMemberAssignment
		if v, err = readShareCurrentMemberAssignmentValue(value); err == nil {
			m := sg.member(k.Member)
			m.epoch, m.previousEpoch, m.assigned = v.MemberEpoch, v.PreviousMemberEpoch, assignmentOf(v.AssignedPartitions)
		}
	case shareStatePartitionMetadataKeyType:
		var v shareStatePartitionMetadata
		if v, err = readShareStatePartitionMetadataValue(value); err == nil {
			sg.stateTopics = map[base.TopicID]shareTopicPartitions{}
			for _, t := range append(v.InitializingTopics, v.InitializedTopics...) {
				sg.stateTopics[t.TopicID] = mergeStateTopic(sg.stateTopics[t.TopicID], t)
			}
		}
	default:
		err = fmt.Errorf("%w: key type %d is not a share group record's", ErrBadRecord, k.Type)
	}
	if err != nil {
		return before, err
	}
	return sg, nil
}

func replayShareTombstone(sg *shareGroup, k consumerKey) (*shareGroup, error) {
	if sg == nil {
		return nil, nil
	}
	switch k.Type {
	case shareGroupMetadataKeyType:
		if len(sg.members) > 0 || len(sg.targets) > 0 {
			return sg, fmt.Errorf("%w: share group %q deleted with %d members", ErrBadRecord, k.Group, len(sg.members))
		}
		return nil, nil
	case shareMemberMetadataKeyType:
		m, ok := sg.members[k.Member]
		if !ok {
			return sg, nil
		}
		if m.epoch != leaveEpoch || sg.targets[k.Member] != nil {
			return sg, fmt.Errorf("%w: share member %q of %q deleted before its assignment", ErrBadRecord, k.Member, k.Group)
		}
		sg.subscribe(m.topics, -1)
		delete(sg.members, k.Member)
	case shareTargetAssignmentMetadataKeyType:
		sg.assignmentEpoch = leaveEpoch
	case shareTargetAssignmentMemberKeyType:
		delete(sg.targets, k.Member)
	case shareCurrentMemberAssignmentKeyType:
		if m, ok := sg.members[k.Member]; ok {
			m.epoch, m.previousEpoch, m.assigned = leaveEpoch, leaveEpoch, nil
		}
	case shareStatePartitionMetadataKeyType:
		sg.stateTopics = nil
	default:
		return sg, fmt.Errorf("%w: key type %d is not a share group record's", ErrBadRecord, k.Type)
	}
	return sg, nil
}

// mergeStateTopic is a with t's partitions added (a's name and timestamp
// kept when a exists).
func mergeStateTopic(a, t shareTopicPartitions) shareTopicPartitions {
	if a.TopicName == "" {
		a.TopicID, a.TopicName, a.CreateTimestampMs = t.TopicID, t.TopicName, t.CreateTimestampMs
	}
	a.Partitions = sortedInt32Set(append(slices.Clone(a.Partitions), t.Partitions...))
	return a
}

func sortedInt32Set(l []int32) []int32 {
	slices.Sort(l)
	return slices.Compact(l)
}

// member is the member called id, created (at epoch 0) if there is none.
func (sg *shareGroup) member(id string) *shareMember {
	m, ok := sg.members[id]
	if !ok {
		m = &shareMember{id: id}
		sg.members[id] = m
	}
	return m
}

func (sg *shareGroup) subscribe(topics []string, delta int) {
	for _, t := range topics {
		sg.subscribers[t] += delta
		if sg.subscribers[t] <= 0 {
			delete(sg.subscribers, t)
		}
	}
}

// subscribedNames is the topic names some member subscribes to, ascending.
func (sg *shareGroup) subscribedNames() []string {
	names := make([]string, 0, len(sg.subscribers))
	for t := range sg.subscribers {
		names = append(names, t)
	}
	slices.Sort(names)
	return names
}

func sortedSet(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

// replayShareRecord applies a share group record of __consumer_offsets. A
// share group id is not the id of a classic or consumer group: a record
// that would make it one is an error.
func (c *Coordinator) replayShareRecord(k consumerKey, value []byte) error {
	if g, ok := c.groups[k.Group]; ok && value != nil && !g.garbage() {
		return fmt.Errorf("%w: a share group record for %q, a classic or consumer group", ErrBadRecord, k.Group)
	}
	sg, err := replayShare(c.shares[k.Group], k, value)
	if err != nil {
		return err
	}
	if sg == nil {
		delete(c.shares, k.Group)
		return nil
	}
	c.shares[k.Group] = sg
	return nil
}

// shareSettings are the group.share.* settings of group id: the broker's,
// or the group's own session timeout and heartbeat interval.
type shareSettings struct {
	sessionTimeout    time.Duration
	heartbeatInterval time.Duration
	maxSize           int
}

func (c *Coordinator) shareSettings(id string) shareSettings {
	set := shareSettings{
		sessionTimeout:    c.opts.ShareSessionTimeout,
		heartbeatInterval: c.opts.ShareHeartbeatInterval,
		maxSize:           c.opts.ShareMaxSize,
	}
	if c.opts.ShareGroupSettings != nil {
		if session, heartbeat, ok := c.opts.ShareGroupSettings(id); ok {
			set.sessionTimeout, set.heartbeatInterval = session, heartbeat
		}
	}
	return set
}
