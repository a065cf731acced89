package group

import "github.com/twmb/franz-go/pkg/kbin"

// KIP-848 consumer group records of __consumer_offsets, byte for byte as
// Kafka writes them (its JSON schemas in
// group-coordinator/src/main/resources/common/message/, which kmsg lacks).
//
// A key is the int16 key type (where classic keys put their version), then
// the key's strings with int16 lengths. A value is the int16 value version,
// then the fields in flexible encoding: compact strings, arrays and bytes
// (uvarint length+1, 0 for null), 16-byte uuids, and a tagged-field section
// at the end of every struct, where the schema's tagged fields go when they
// differ from their defaults. Decoding validates everything and reports what
// was wrong in an error wrapping ErrBadRecord; it skips unknown tagged fields
// as Kafka does. A tombstone (nil value) is the caller's to handle.
//
// Layout of each record, in consumer_records_group.go and
// consumer_records_member.go; the shared wire types in
// consumer_records_wire.go.

// Key types of the consumer group records (Kafka's "apiKey" of each
// coordinator-key schema). 4 is the deprecated ConsumerGroupPartitionMetadata,
// which is not decoded here.
const (
	consumerGroupMetadataKeyType    int16 = 3  // ConsumerGroupMetadataKey
	memberMetadataKeyType           int16 = 5  // ConsumerGroupMemberMetadataKey
	targetAssignmentMetadataKeyType int16 = 6  // ConsumerGroupTargetAssignmentMetadataKey
	targetAssignmentMemberKeyType   int16 = 7  // ConsumerGroupTargetAssignmentMemberKey
	currentMemberAssignmentKeyType  int16 = 8  // ConsumerGroupCurrentMemberAssignmentKey
	regularExpressionKeyType        int16 = 16 // ConsumerGroupRegularExpressionKey
)

// consumerValueVersion is the newest (and only) version of every consumer
// group value; encoding always writes it.
const consumerValueVersion int16 = 0

// consumerKey is a decoded consumer group record key.
type consumerKey struct {
	Type   int16 // one of the key types above
	Group  string
	Member string // member records (types 5, 7 and 8) only
	Regex  string // regular expression records (type 16) only
}

func consumerGroupMetadataKey(groupID string) []byte {
	return appendConsumerKey(consumerGroupMetadataKeyType, groupID)
}

func memberMetadataKey(groupID, memberID string) []byte {
	return appendConsumerKey(memberMetadataKeyType, groupID, memberID)
}

func targetAssignmentMetadataKey(groupID string) []byte {
	return appendConsumerKey(targetAssignmentMetadataKeyType, groupID)
}

func targetAssignmentMemberKey(groupID, memberID string) []byte {
	return appendConsumerKey(targetAssignmentMemberKeyType, groupID, memberID)
}

func currentMemberAssignmentKey(groupID, memberID string) []byte {
	return appendConsumerKey(currentMemberAssignmentKeyType, groupID, memberID)
}

func regularExpressionKey(groupID, regex string) []byte {
	return appendConsumerKey(regularExpressionKeyType, groupID, regex)
}

// appendConsumerKey writes a key: its type, then its strings in order, with
// int16 lengths (keys are not flexible).
func appendConsumerKey(keyType int16, fields ...string) []byte {
	dst := kbin.AppendInt16(nil, keyType)
	for _, f := range fields {
		dst = kbin.AppendString(dst, checkString(f))
	}
	return dst
}

// readConsumerKey decodes the key of any consumer group record above, or
// of a share group record (share_records.go), which have the same shapes.
// Another key type (a classic record's, a streams group's, the deprecated
// partition metadata, share-state partition metadata) is an error.
func readConsumerKey(key []byte) (consumerKey, error) {
	r := newRecordReader("consumer group record key", key)
	k := consumerKey{Type: r.Int16("key type")}
	if r.Err() != nil {
		return consumerKey{}, r.Err()
	}
	switch k.Type {
	case consumerGroupMetadataKeyType, targetAssignmentMetadataKeyType,
		shareGroupMetadataKeyType, shareTargetAssignmentMetadataKeyType, shareStatePartitionMetadataKeyType:
		k.Group = r.KeyString("GroupId")
	case memberMetadataKeyType, targetAssignmentMemberKeyType, currentMemberAssignmentKeyType,
		shareMemberMetadataKeyType, shareTargetAssignmentMemberKeyType, shareCurrentMemberAssignmentKeyType:
		k.Group = r.KeyString("GroupId")
		k.Member = r.KeyString("MemberId")
	case regularExpressionKeyType:
		k.Group = r.KeyString("GroupId")
		k.Regex = r.KeyString("RegularExpression")
	default:
		r.Fail("key type %d is not a consumer group record's", k.Type)
	}
	if err := r.Done(); err != nil {
		return consumerKey{}, err
	}
	return k, nil
}
