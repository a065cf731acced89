package group

import "github.com/twmb/franz-go/pkg/kbin"

// KIP-932 share group records of __consumer_offsets, byte for byte as Kafka
// writes them (its ShareGroup*Key/Value JSON schemas), in the layout of the
// consumer group records (consumer_records.go): a key is its type and its
// strings; a value is version 0, flexible.
//
// Key types 12 (target assignment metadata) and 13 (target assignment
// member) have the consumer group's type-6 and type-7 values, and are
// written with their codecs. Type 15 (ShareGroupStatePartitionMetadata)
// lists the partitions whose share-partition state may exist (Kafka's
// initialized topics): the partition leaders create that state on first
// use (see share/leader), so nothing is ever initializing here, and
// DeleteGroups deletes the state of what it lists.
const (
	shareMemberMetadataKeyType           int16 = 10 // ShareGroupMemberMetadataKey
	shareGroupMetadataKeyType            int16 = 11 // ShareGroupMetadataKey
	shareTargetAssignmentMetadataKeyType int16 = 12 // ShareGroupTargetAssignmentMetadataKey
	shareTargetAssignmentMemberKeyType   int16 = 13 // ShareGroupTargetAssignmentMemberKey
	shareCurrentMemberAssignmentKeyType  int16 = 14 // ShareGroupCurrentMemberAssignmentKey
	shareStatePartitionMetadataKeyType   int16 = 15 // ShareGroupStatePartitionMetadataKey
)

// isShareKeyType reports whether a record key type is a share group's.
func isShareKeyType(t int16) bool {
	return t >= shareMemberMetadataKeyType && t <= shareStatePartitionMetadataKeyType
}

func shareStatePartitionMetadataKey(groupID string) []byte {
	return appendConsumerKey(shareStatePartitionMetadataKeyType, groupID)
}

func shareMemberMetadataKey(groupID, memberID string) []byte {
	return appendConsumerKey(shareMemberMetadataKeyType, groupID, memberID)
}

func shareGroupMetadataKey(groupID string) []byte {
	return appendConsumerKey(shareGroupMetadataKeyType, groupID)
}

func shareTargetAssignmentMetadataKey(groupID string) []byte {
	return appendConsumerKey(shareTargetAssignmentMetadataKeyType, groupID)
}

func shareTargetAssignmentMemberKey(groupID, memberID string) []byte {
	return appendConsumerKey(shareTargetAssignmentMemberKeyType, groupID, memberID)
}

func shareCurrentMemberAssignmentKey(groupID, memberID string) []byte {
	return appendConsumerKey(shareCurrentMemberAssignmentKeyType, groupID, memberID)
}

// shareMemberMetadata is ShareGroupMemberMetadataValue (key type 10):
//
//	RackId nullable string
//	ClientId string
//	ClientHost string
//	SubscribedTopicNames []string
type shareMemberMetadata struct {
	RackID               *string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string
}

func shareMemberMetadataValue(v shareMemberMetadata) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = appendNullableString(dst, v.RackID)
	dst = appendString(dst, v.ClientID)
	dst = appendString(dst, v.ClientHost)
	dst = appendStringList(dst, v.SubscribedTopicNames)
	return appendTags(dst)
}

func readShareMemberMetadataValue(value []byte) (shareMemberMetadata, error) {
	r := newValueReader("ShareGroupMemberMetadataValue", value)
	v := shareMemberMetadata{
		RackID:               r.NullableString("RackId"),
		ClientID:             r.CompactString("ClientId"),
		ClientHost:           r.CompactString("ClientHost"),
		SubscribedTopicNames: r.StringList("SubscribedTopicNames"),
	}
	r.tags(nil)
	if err := r.Done(); err != nil {
		return shareMemberMetadata{}, err
	}
	return v, nil
}

// shareGroupMetadata is ShareGroupMetadataValue (key type 11):
//
//	Epoch int32
//	MetadataHash int64
type shareGroupMetadata struct {
	Epoch        int32
	MetadataHash int64
}

func shareGroupMetadataValue(v shareGroupMetadata) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = kbin.AppendInt32(dst, v.Epoch)
	dst = kbin.AppendInt64(dst, v.MetadataHash)
	return appendTags(dst)
}

func readShareGroupMetadataValue(value []byte) (shareGroupMetadata, error) {
	r := newValueReader("ShareGroupMetadataValue", value)
	v := shareGroupMetadata{Epoch: r.Int32("Epoch"), MetadataHash: r.Int64("MetadataHash")}
	r.tags(nil)
	if err := r.Done(); err != nil {
		return shareGroupMetadata{}, err
	}
	return v, nil
}

// shareCurrentMemberAssignment is ShareGroupCurrentMemberAssignmentValue
// (key type 14):
//
//	MemberEpoch int32
//	PreviousMemberEpoch int32
//	State int8 (0: stable, the only state of a share member)
//	AssignedPartitions []{TopicId uuid; Partitions []int32}
type shareCurrentMemberAssignment struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               int8
	AssignedPartitions  []topicPartitions // without AssignmentEpochs
}

func shareCurrentMemberAssignmentValue(v shareCurrentMemberAssignment) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = kbin.AppendInt32(dst, v.MemberEpoch)
	dst = kbin.AppendInt32(dst, v.PreviousMemberEpoch)
	dst = kbin.AppendInt8(dst, v.State)
	dst = appendTopicPartitionsList(dst, v.AssignedPartitions, false)
	return appendTags(dst)
}

func readShareCurrentMemberAssignmentValue(value []byte) (shareCurrentMemberAssignment, error) {
	r := newValueReader("ShareGroupCurrentMemberAssignmentValue", value)
	v := shareCurrentMemberAssignment{
		MemberEpoch:         r.Int32("MemberEpoch"),
		PreviousMemberEpoch: r.Int32("PreviousMemberEpoch"),
		State:               r.Int8("State"),
		AssignedPartitions:  r.topicPartitionsList("AssignedPartitions", false),
	}
	r.tags(nil)
	if err := r.Done(); err != nil {
		return shareCurrentMemberAssignment{}, err
	}
	return v, nil
}

// shareTopicPartitions is a TopicPartitionsInfo of
// ShareGroupStatePartitionMetadataValue.
type shareTopicPartitions struct {
	TopicID           [16]byte
	TopicName         string
	Partitions        []int32
	CreateTimestampMs int64
}

// shareTopic is a TopicInfo of ShareGroupStatePartitionMetadataValue.
type shareTopic struct {
	TopicID   [16]byte
	TopicName string
}

// shareStatePartitionMetadata is ShareGroupStatePartitionMetadataValue
// (key type 15):
//
//	InitializingTopics []{TopicId uuid; TopicName string; Partitions []int32; CreateTimestamp int64}
//	InitializedTopics  []{the same}
//	DeletingTopics     []{TopicId uuid; TopicName string}
type shareStatePartitionMetadata struct {
	InitializingTopics []shareTopicPartitions
	InitializedTopics  []shareTopicPartitions
	DeletingTopics     []shareTopic
}

func appendShareTopicPartitions(dst []byte, l []shareTopicPartitions) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(l))
	for _, t := range l {
		dst = kbin.AppendUuid(dst, t.TopicID)
		dst = appendString(dst, t.TopicName)
		dst = appendInt32List(dst, t.Partitions)
		dst = kbin.AppendInt64(dst, t.CreateTimestampMs)
		dst = appendTags(dst)
	}
	return dst
}

func shareStatePartitionMetadataValue(v shareStatePartitionMetadata) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = appendShareTopicPartitions(dst, v.InitializingTopics)
	dst = appendShareTopicPartitions(dst, v.InitializedTopics)
	dst = kbin.AppendCompactArrayLen(dst, len(v.DeletingTopics))
	for _, t := range v.DeletingTopics {
		dst = kbin.AppendUuid(dst, t.TopicID)
		dst = appendString(dst, t.TopicName)
		dst = appendTags(dst)
	}
	return appendTags(dst)
}

// minShareTopicBytes is the least a TopicInfo takes: uuid, empty name, no
// tags.
const minShareTopicBytes = 16 + 1 + 1

func (r *recordReader) shareTopicPartitionsList(field string) []shareTopicPartitions {
	n := r.ArrayLen(field, minShareTopicBytes+1+8, false)
	var l []shareTopicPartitions
	for i := 0; i < n && r.Err() == nil; i++ {
		l = append(l, shareTopicPartitions{
			TopicID:           r.UUID(field + ".TopicId"),
			TopicName:         r.CompactString(field + ".TopicName"),
			Partitions:        r.Int32List(field+".Partitions", false),
			CreateTimestampMs: r.Int64(field + ".CreateTimestamp"),
		})
		r.tags(nil)
	}
	return l
}

func readShareStatePartitionMetadataValue(value []byte) (shareStatePartitionMetadata, error) {
	r := newValueReader("ShareGroupStatePartitionMetadataValue", value)
	v := shareStatePartitionMetadata{
		InitializingTopics: r.shareTopicPartitionsList("InitializingTopics"),
		InitializedTopics:  r.shareTopicPartitionsList("InitializedTopics"),
	}
	n := r.ArrayLen("DeletingTopics", minShareTopicBytes, false)
	for i := 0; i < n && r.Err() == nil; i++ {
		v.DeletingTopics = append(v.DeletingTopics, shareTopic{TopicID: r.UUID("DeletingTopics.TopicId"), TopicName: r.CompactString("DeletingTopics.TopicName")})
		r.tags(nil)
	}
	r.tags(nil)
	if err := r.Done(); err != nil {
		return shareStatePartitionMetadata{}, err
	}
	return v, nil
}
