package group

import "github.com/twmb/franz-go/pkg/kbin"

// The member-level consumer group values: a member's metadata, its target
// assignment and its current assignment.

// memberMetadata is ConsumerGroupMemberMetadataValue (key type 5):
//
//	InstanceId nullable string
//	RackId nullable string
//	ClientId string
//	ClientHost string
//	SubscribedTopicNames []string
//	SubscribedTopicRegex nullable string
//	RebalanceTimeoutMs int32
//	ServerAssignor nullable string
//	tag 0: ClassicMemberMetadata nullable struct, default null
type memberMetadata struct {
	InstanceID           *string
	RackID               *string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string
	SubscribedTopicRegex *string
	RebalanceTimeoutMs   int32
	ServerAssignor       *string
	// Classic is set for a member that speaks the classic protocol to a
	// consumer group.
	Classic *classicMemberMetadata
}

// classicMemberMetadata is ClassicMemberMetadata:
//
//	SessionTimeoutMs int32
//	SupportedProtocols []{Name string; Metadata bytes}
type classicMemberMetadata struct {
	SessionTimeoutMs   int32
	SupportedProtocols []classicProtocol
}

type classicProtocol struct {
	Name     string
	Metadata []byte // nil when empty
}

func memberMetadataValue(v memberMetadata) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = appendNullableString(dst, v.InstanceID)
	dst = appendNullableString(dst, v.RackID)
	dst = appendString(dst, v.ClientID)
	dst = appendString(dst, v.ClientHost)
	dst = appendStringList(dst, v.SubscribedTopicNames)
	dst = appendNullableString(dst, v.SubscribedTopicRegex)
	dst = kbin.AppendInt32(dst, v.RebalanceTimeoutMs)
	dst = appendNullableString(dst, v.ServerAssignor)
	var tags []recordTag
	if v.Classic != nil {
		// A tagged nullable struct starts with uvarint 1 for "present".
		tags = append(tags, recordTag{Tag: 0, Body: appendClassicMemberMetadata(kbin.AppendUvarint(nil, 1), v.Classic)})
	}
	return appendTags(dst, tags...)
}

func appendClassicMemberMetadata(dst []byte, c *classicMemberMetadata) []byte {
	dst = kbin.AppendInt32(dst, c.SessionTimeoutMs)
	dst = kbin.AppendCompactArrayLen(dst, len(c.SupportedProtocols))
	for _, p := range c.SupportedProtocols {
		dst = appendString(dst, p.Name)
		dst = kbin.AppendCompactBytes(dst, p.Metadata)
		dst = appendTags(dst)
	}
	return appendTags(dst)
}

func readMemberMetadataValue(value []byte) (memberMetadata, error) {
	r := newValueReader("ConsumerGroupMemberMetadataValue", value)
	v := memberMetadata{
		InstanceID:           r.NullableString("InstanceId"),
		RackID:               r.NullableString("RackId"),
		ClientID:             r.CompactString("ClientId"),
		ClientHost:           r.CompactString("ClientHost"),
		SubscribedTopicNames: r.StringList("SubscribedTopicNames"),
		SubscribedTopicRegex: r.NullableString("SubscribedTopicRegex"),
		RebalanceTimeoutMs:   r.Int32("RebalanceTimeoutMs"),
		ServerAssignor:       r.NullableString("ServerAssignor"),
	}
	r.tags(func(tag uint32, f *recordReader) bool {
		if tag != 0 {
			return false
		}
		// Kafka reads the presence as a Java int: 0, and what overflows
		// it, is null.
		if int32(f.Uvarint("ClassicMemberMetadata")) > 0 {
			v.Classic = f.classicMemberMetadata()
		}
		return true
	})
	if err := r.Done(); err != nil {
		return memberMetadata{}, err
	}
	return v, nil
}

func (r *recordReader) classicMemberMetadata() *classicMemberMetadata {
	c := &classicMemberMetadata{SessionTimeoutMs: r.Int32("SessionTimeoutMs")}
	// A protocol takes at least 3 bytes: its name, metadata and tags.
	if n := r.ArrayLen("SupportedProtocols", 3, false); n > 0 {
		c.SupportedProtocols = make([]classicProtocol, 0, n)
		for i := 0; i < n && r.Err() == nil; i++ {
			p := classicProtocol{Name: r.CompactString("Name"), Metadata: r.Bytes("Metadata")}
			r.tags(nil)
			c.SupportedProtocols = append(c.SupportedProtocols, p)
		}
	}
	r.tags(nil)
	return c
}

// topicPartitions is the partitions of one topic in an assignment.
type topicPartitions struct {
	TopicID    [16]byte
	Partitions []int32
	// AssignmentEpochs, aligned with Partitions, is the epoch at which each
	// partition was assigned (KIP-1251); nil when Kafka did not record
	// them. Only current assignments have it (tag 0 of their
	// TopicPartitions, a nullable []int32, default null).
	AssignmentEpochs []int32
}

// appendTopicPartitionsList writes an assignment's []TopicPartitions;
// withEpochs is whether the schema has AssignmentEpochs.
func appendTopicPartitionsList(dst []byte, l []topicPartitions, withEpochs bool) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(l))
	for _, tp := range l {
		dst = kbin.AppendUuid(dst, tp.TopicID)
		dst = appendInt32List(dst, tp.Partitions)
		var tags []recordTag
		if tp.AssignmentEpochs != nil {
			if !withEpochs {
				panic("group: assignment epochs in a target assignment")
			}
			tags = append(tags, recordTag{Tag: 0, Body: appendInt32List(nil, tp.AssignmentEpochs)})
		}
		dst = appendTags(dst, tags...)
	}
	return dst
}

// minTopicPartitionsBytes is the least a TopicPartitions takes: uuid, empty
// partitions, no tags.
const minTopicPartitionsBytes = 16 + 1 + 1

func (r *recordReader) topicPartitionsList(field string, withEpochs bool) []topicPartitions {
	n := r.ArrayLen(field, minTopicPartitionsBytes, false)
	if n == 0 {
		return nil
	}
	topicField, partitionsField := field+".TopicId", field+".Partitions"
	l := make([]topicPartitions, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		tp := topicPartitions{TopicID: r.UUID(topicField), Partitions: r.Int32List(partitionsField, false)}
		r.tags(func(tag uint32, f *recordReader) bool {
			if !withEpochs || tag != 0 {
				return false
			}
			tp.AssignmentEpochs = f.Int32List("AssignmentEpochs", true)
			return true
		})
		l = append(l, tp)
	}
	return l
}

// targetAssignmentMember is ConsumerGroupTargetAssignmentMemberValue (key
// type 7):
//
//	TopicPartitions []{TopicId uuid; Partitions []int32}
type targetAssignmentMember struct {
	TopicPartitions []topicPartitions // without AssignmentEpochs
}

func targetAssignmentMemberValue(v targetAssignmentMember) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = appendTopicPartitionsList(dst, v.TopicPartitions, false)
	return appendTags(dst)
}

func readTargetAssignmentMemberValue(value []byte) (targetAssignmentMember, error) {
	r := newValueReader("ConsumerGroupTargetAssignmentMemberValue", value)
	v := targetAssignmentMember{TopicPartitions: r.topicPartitionsList("TopicPartitions", false)}
	r.tags(nil)
	if err := r.Done(); err != nil {
		return targetAssignmentMember{}, err
	}
	return v, nil
}

// currentMemberAssignment is ConsumerGroupCurrentMemberAssignmentValue (key
// type 8):
//
//	MemberEpoch int32
//	PreviousMemberEpoch int32
//	State int8
//	AssignedPartitions []TopicPartitions
//	PartitionsPendingRevocation []TopicPartitions
//
// where TopicPartitions is {TopicId uuid; Partitions []int32; tag 0:
// AssignmentEpochs nullable []int32}.
type currentMemberAssignment struct {
	MemberEpoch                 int32
	PreviousMemberEpoch         int32
	State                       int8 // Kafka's MemberState
	AssignedPartitions          []topicPartitions
	PartitionsPendingRevocation []topicPartitions
}

func currentMemberAssignmentValue(v currentMemberAssignment) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = kbin.AppendInt32(dst, v.MemberEpoch)
	dst = kbin.AppendInt32(dst, v.PreviousMemberEpoch)
	dst = kbin.AppendInt8(dst, v.State)
	dst = appendTopicPartitionsList(dst, v.AssignedPartitions, true)
	dst = appendTopicPartitionsList(dst, v.PartitionsPendingRevocation, true)
	return appendTags(dst)
}

func readCurrentMemberAssignmentValue(value []byte) (currentMemberAssignment, error) {
	r := newValueReader("ConsumerGroupCurrentMemberAssignmentValue", value)
	v := currentMemberAssignment{
		MemberEpoch:                 r.Int32("MemberEpoch"),
		PreviousMemberEpoch:         r.Int32("PreviousMemberEpoch"),
		State:                       r.Int8("State"),
		AssignedPartitions:          r.topicPartitionsList("AssignedPartitions", true),
		PartitionsPendingRevocation: r.topicPartitionsList("PartitionsPendingRevocation", true),
	}
	r.tags(nil)
	if err := r.Done(); err != nil {
		return currentMemberAssignment{}, err
	}
	return v, nil
}
