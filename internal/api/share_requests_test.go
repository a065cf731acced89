package api

import "github.com/twmb/franz-go/pkg/kmsg"

// Requests of the share group APIs that name one group and one topic, as
// the authorization tests send them: each reaches its group's check and,
// past it, the topic's.

// shareFetchOf fetches partition 0 of the topic with id topicID.
func shareFetchOf(group, member string, topicID [16]byte) *kmsg.ShareFetchRequest {
	r := kmsg.NewPtrShareFetchRequest()
	r.GroupID, r.MemberID = kmsg.StringPtr(group), kmsg.StringPtr(member)
	r.MaxBytes, r.MaxRecords, r.BatchSize = 1<<20, 100, 100
	t := kmsg.NewShareFetchRequestTopic()
	t.TopicID = topicID
	t.Partitions = append(t.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	r.Topics = append(r.Topics, t)
	return r
}

// describeShareOffsetsOf asks for the group's offsets of partition 0 of
// each topic; with none, for all of them.
func describeShareOffsetsOf(group string, topics ...string) *kmsg.DescribeShareGroupOffsetsRequest {
	r := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	g.GroupID = group
	for _, topic := range topics {
		t := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		t.Topic, t.Partitions = topic, []int32{0}
		g.Topics = append(g.Topics, t)
	}
	r.Groups = append(r.Groups, g)
	return r
}

// alterShareOffsetsOf sets the group's start offset of partition 0 of the
// topic (to 0).
func alterShareOffsetsOf(group, topic string) *kmsg.AlterShareGroupOffsetsRequest {
	r := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	r.GroupID = group
	t := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	t.Topic = topic
	t.Partitions = append(t.Partitions, kmsg.NewAlterShareGroupOffsetsRequestTopicPartition())
	r.Topics = append(r.Topics, t)
	return r
}

// deleteShareOffsetsOf deletes the group's offsets of the topic.
func deleteShareOffsetsOf(group, topic string) *kmsg.DeleteShareGroupOffsetsRequest {
	r := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	r.GroupID = group
	t := kmsg.NewDeleteShareGroupOffsetsRequestTopic()
	t.Topic = topic
	r.Topics = append(r.Topics, t)
	return r
}
