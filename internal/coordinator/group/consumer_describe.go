package group

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// Member types of ConsumerGroupDescribe v1 (KIP-1099): a member speaking
// the classic protocol, or the consumer protocol.
const (
	memberTypeClassic  int8 = 0
	memberTypeConsumer int8 = 1
)

// describe is the group as ConsumerGroupDescribe answers it: its state,
// epochs and assignor, and each member (ascending by id) with its
// subscription, current and target assignments; topics are named by
// view (a topic deleted since has no name); the assignor is the group's
// among those offered. AuthorizedOperations is the api layer's to fill.
func (cg *consumerGroup) describe(id string, view TopicsView, offered []string) kmsg.ConsumerGroupDescribeResponseGroup {
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.State = id, string(cg.state())
	g.Epoch, g.AssignmentEpoch = cg.epoch, cg.assignmentEpoch
	g.AssignorName = cg.preferredAssignor(offered).Name()
	for _, mid := range cg.memberIDs() {
		m := cg.members[mid]
		d := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		d.MemberID, d.InstanceID, d.RackID, d.MemberEpoch = m.id, m.instanceID, m.rackID, m.Epoch
		d.ClientID, d.ClientHost = m.clientID, m.clientHost
		d.SubscribedTopics, d.SubscribedTopicRegex = append([]string{}, m.topics...), m.regex
		d.Assignment, d.TargetAssignment = describedAssignment(m.Assigned, view), describedAssignment(cg.targets[mid], view)
		d.MemberType = memberTypeConsumer
		if m.classic != nil {
			d.MemberType = memberTypeClassic
		}
		g.Members = append(g.Members, d)
	}
	return g
}

func describedAssignment(a assignor.Assignment, view TopicsView) kmsg.Assignment {
	out := kmsg.NewAssignment()
	out.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	for _, tp := range topicPartitionsOf(a) {
		t := kmsg.NewAssignmentTopicPartition()
		t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
		t.Topic, _ = view.TopicName(tp.TopicID)
		out.TopicPartitions = append(out.TopicPartitions, t)
	}
	return out
}
