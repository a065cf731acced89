package group

import "github.com/twmb/franz-go/pkg/kbin"

// The group-level consumer group values: the group's epoch, its target
// assignment's epoch and the topics of a subscribed regular expression.

// consumerGroupMetadata is ConsumerGroupMetadataValue (key type 3):
//
//	Epoch int32
//	tag 0: MetadataHash int64, default 0 (KIP-1101)
//	tag 1: CreationTimeMs int64, default -1 (KIP-1282)
type consumerGroupMetadata struct {
	Epoch int32
	// MetadataHash hashes the subscribed topics' metadata; 0 is Kafka's
	// default (no hash).
	MetadataHash int64
	// CreationTimeMs is when the group was first created, if
	// HasCreationTime; Kafka's -1 ("unknown") is !HasCreationTime.
	CreationTimeMs  int64
	HasCreationTime bool
}

func consumerGroupMetadataValue(v consumerGroupMetadata) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = kbin.AppendInt32(dst, v.Epoch)
	var tags []recordTag
	if v.MetadataHash != 0 {
		tags = append(tags, recordTag{Tag: 0, Body: kbin.AppendInt64(nil, v.MetadataHash)})
	}
	if v.HasCreationTime {
		if v.CreationTimeMs == -1 {
			panic("group: creation time -1 is Kafka's unknown; leave HasCreationTime false")
		}
		tags = append(tags, recordTag{Tag: 1, Body: kbin.AppendInt64(nil, v.CreationTimeMs)})
	}
	return appendTags(dst, tags...)
}

func readConsumerGroupMetadataValue(value []byte) (consumerGroupMetadata, error) {
	r := newValueReader("ConsumerGroupMetadataValue", value)
	v := consumerGroupMetadata{Epoch: r.Int32("Epoch")}
	r.tags(func(tag uint32, f *recordReader) bool {
		switch tag {
		case 0:
			v.MetadataHash = f.Int64("MetadataHash")
		case 1:
			v.CreationTimeMs = f.Int64("CreationTimeMs")
			v.HasCreationTime = v.CreationTimeMs != -1
			if !v.HasCreationTime {
				v.CreationTimeMs = 0
			}
		default:
			return false
		}
		return true
	})
	if err := r.Done(); err != nil {
		return consumerGroupMetadata{}, err
	}
	return v, nil
}

// targetAssignmentMetadata is ConsumerGroupTargetAssignmentMetadataValue
// (key type 6):
//
//	AssignmentEpoch int32
//	tag 0: AssignmentTimestamp int64, default 0 (KIP-1263)
type targetAssignmentMetadata struct {
	AssignmentEpoch int32
	// AssignmentTimestampMs is when the assignment was computed; 0 (Kafka's
	// default) is unknown.
	AssignmentTimestampMs int64
}

func targetAssignmentMetadataValue(v targetAssignmentMetadata) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = kbin.AppendInt32(dst, v.AssignmentEpoch)
	var tags []recordTag
	if v.AssignmentTimestampMs != 0 {
		tags = append(tags, recordTag{Tag: 0, Body: kbin.AppendInt64(nil, v.AssignmentTimestampMs)})
	}
	return appendTags(dst, tags...)
}

func readTargetAssignmentMetadataValue(value []byte) (targetAssignmentMetadata, error) {
	r := newValueReader("ConsumerGroupTargetAssignmentMetadataValue", value)
	v := targetAssignmentMetadata{AssignmentEpoch: r.Int32("AssignmentEpoch")}
	r.tags(func(tag uint32, f *recordReader) bool {
		if tag != 0 {
			return false
		}
		v.AssignmentTimestampMs = f.Int64("AssignmentTimestamp")
		return true
	})
	if err := r.Done(); err != nil {
		return targetAssignmentMetadata{}, err
	}
	return v, nil
}

// regularExpression is ConsumerGroupRegularExpressionValue (key type 16):
// the topics a subscribed regular expression resolved to.
//
//	Topics []string
//	Version int64
//	Timestamp int64
type regularExpression struct {
	Topics []string
	// MetadataVersion is Kafka's Version: the version of the metadata
	// image the expression was resolved against.
	MetadataVersion int64
	// TimestampMs is when it was resolved.
	TimestampMs int64
}

func regularExpressionValue(v regularExpression) []byte {
	dst := kbin.AppendInt16(nil, consumerValueVersion)
	dst = appendStringList(dst, v.Topics)
	dst = kbin.AppendInt64(dst, v.MetadataVersion)
	dst = kbin.AppendInt64(dst, v.TimestampMs)
	return appendTags(dst)
}

func readRegularExpressionValue(value []byte) (regularExpression, error) {
	r := newValueReader("ConsumerGroupRegularExpressionValue", value)
	v := regularExpression{
		Topics:          r.StringList("Topics"),
		MetadataVersion: r.Int64("Version"),
		TimestampMs:     r.Int64("Timestamp"),
	}
	r.tags(nil)
	if err := r.Done(); err != nil {
		return regularExpression{}, err
	}
	return v, nil
}
