package group

import (
	"encoding/hex"
	"testing"

	"pgregory.net/rapid"
)

var (
	genShareMemberMetadata = rapid.Custom(func(t *rapid.T) shareMemberMetadata {
		return shareMemberMetadata{
			RackID:               genOptString().Draw(t, "rack"),
			ClientID:             genString.Draw(t, "client"),
			ClientHost:           genString.Draw(t, "host"),
			SubscribedTopicNames: genList(genString, 4).Draw(t, "topics"),
		}
	})
	genShareGroupMetadata = rapid.Custom(func(t *rapid.T) shareGroupMetadata {
		return shareGroupMetadata{Epoch: rapid.Int32().Draw(t, "epoch"), MetadataHash: rapid.Int64().Draw(t, "hash")}
	})
	genShareTopicPartitions = rapid.Custom(func(t *rapid.T) shareTopicPartitions {
		var id [16]byte
		copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "id"))
		return shareTopicPartitions{TopicID: id, TopicName: genString.Draw(t, "name"),
			Partitions: genList(rapid.Int32(), 5).Draw(t, "partitions"), CreateTimestampMs: rapid.Int64().Draw(t, "ts")}
	})
	genShareStatePartitionMetadata = rapid.Custom(func(t *rapid.T) shareStatePartitionMetadata {
		v := shareStatePartitionMetadata{
			InitializingTopics: genList(genShareTopicPartitions, 3).Draw(t, "initializing"),
			InitializedTopics:  genList(genShareTopicPartitions, 3).Draw(t, "initialized"),
		}
		v.DeletingTopics = genList(rapid.Custom(func(t *rapid.T) shareTopic {
			var id [16]byte
			copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "id"))
			return shareTopic{TopicID: id, TopicName: genString.Draw(t, "name")}
		}), 3).Draw(t, "deleting")
		return v
	})
	genShareCurrentMemberAssignment = rapid.Custom(func(t *rapid.T) shareCurrentMemberAssignment {
		return shareCurrentMemberAssignment{
			MemberEpoch:         rapid.Int32().Draw(t, "epoch"),
			PreviousMemberEpoch: rapid.Int32().Draw(t, "previous"),
			State:               rapid.Int8().Draw(t, "state"),
			AssignedPartitions:  genList(genTopicPartitions(false), 4).Draw(t, "assigned"),
		}
	})
)

func TestShareRecordValuesRoundTrip(t *testing.T) {
	t.Run("ShareGroupMemberMetadataValue", func(t *testing.T) {
		checkRoundTrip(t, genShareMemberMetadata, shareMemberMetadataValue, readShareMemberMetadataValue)
	})
	t.Run("ShareGroupMetadataValue", func(t *testing.T) {
		checkRoundTrip(t, genShareGroupMetadata, shareGroupMetadataValue, readShareGroupMetadataValue)
	})
	t.Run("ShareGroupStatePartitionMetadataValue", func(t *testing.T) {
		checkRoundTrip(t, genShareStatePartitionMetadata, shareStatePartitionMetadataValue, readShareStatePartitionMetadataValue)
	})
	t.Run("ShareGroupCurrentMemberAssignmentValue", func(t *testing.T) {
		checkRoundTrip(t, genShareCurrentMemberAssignment, shareCurrentMemberAssignmentValue, readShareCurrentMemberAssignmentValue)
	})
}

// Kafka's bytes for a share group's records (its generated writers for the
// ShareGroup* schemas, version 0): the layout this package reads and writes.
func TestShareRecordsGolden(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"ShareGroupMemberMetadataKey", shareMemberMetadataKey("g", "m"), "000a" + "000167" + "00016d"},
		{"ShareGroupMetadataKey", shareGroupMetadataKey("g"), "000b" + "000167"},
		{"ShareGroupCurrentMemberAssignmentKey", shareCurrentMemberAssignmentKey("g", "m"), "000e" + "000167" + "00016d"},
		{
			"ShareGroupMemberMetadataValue",
			shareMemberMetadataValue(shareMemberMetadata{ClientID: "c", ClientHost: "h", SubscribedTopicNames: []string{"t"}}),
			"0000" + "00" + "0263" + "0268" + "02" + "0274" + "00",
		},
		{"ShareGroupMetadataValue", shareGroupMetadataValue(shareGroupMetadata{Epoch: 3, MetadataHash: 1}), "0000" + "00000003" + "0000000000000001" + "00"},
		{
			"ShareGroupCurrentMemberAssignmentValue",
			shareCurrentMemberAssignmentValue(shareCurrentMemberAssignment{MemberEpoch: 2, PreviousMemberEpoch: 1,
				AssignedPartitions: []topicPartitions{{TopicID: [16]byte{0xa1}, Partitions: []int32{0}}}}),
			"0000" + "00000002" + "00000001" + "00" + "02" + "a1000000000000000000000000000000" + "02" + "00000000" + "00" + "00",
		},
	}
	for _, tt := range tests {
		if got := hex.EncodeToString(tt.got); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
