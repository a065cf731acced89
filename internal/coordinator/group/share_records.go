package group

import "github.com/twmb/franz-go/pkg/kbin"

// KIP-932 share group records of __consumer_offsets, byte for byte as Kafka
// writes them (its ShareGroup*Key/Value JSON schemas), in the layout of the
// consumer group records (consumer_records.go): a key is its type and its
// strings; a value is version 0, flexible.
//
// Key types 12 (target assignment metadata) and 13 (target assignment
// member) have the consumer group's type-6 and type-7 values, and are
// written with their codecs. Type 15 (ShareGroupStatePartitionMetadata) is
// not written: share-partition state is created by the partition leaders
// on first use (see the share package).
const (
	shareMemberMetadataKeyType           int16 = 10 // ShareGroupMemberMetadataKey
	shareGroupMetadataKeyType            int16 = 11 // ShareGroupMetadataKey
	shareTargetAssignmentMetadataKeyType int16 = 12 // ShareGroupTargetAssignmentMetadataKey
	shareTargetAssignmentMemberKeyType   int16 = 13 // ShareGroupTargetAssignmentMemberKey
	shareCurrentMemberAssignmentKeyType  int16 = 14 // ShareGroupCurrentMemberAssignmentKey
)

// isShareKeyType reports whether a record key type is a share group's.
func isShareKeyType(t int16) bool {
	return t >= shareMemberMetadataKeyType && t <= shareCurrentMemberAssignmentKeyType
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
		RackID:               r.nullableString("RackId"),
		ClientID:             r.string("ClientId"),
		ClientHost:           r.string("ClientHost"),
		SubscribedTopicNames: r.stringList("SubscribedTopicNames"),
	}
	r.tags(nil)
	if err := r.done(); err != nil {
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
	v := shareGroupMetadata{Epoch: r.int32("Epoch"), MetadataHash: r.int64("MetadataHash")}
	r.tags(nil)
	if err := r.done(); err != nil {
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
		MemberEpoch:         r.int32("MemberEpoch"),
		PreviousMemberEpoch: r.int32("PreviousMemberEpoch"),
		State:               r.int8("State"),
		AssignedPartitions:  r.topicPartitionsList("AssignedPartitions", false),
	}
	r.tags(nil)
	if err := r.done(); err != nil {
		return shareCurrentMemberAssignment{}, err
	}
	return v, nil
}
