package group

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
)

// The embedded consumer protocol of classic members (Kafka's
// ConsumerProtocol): what a member subscribes to and owns, in its JoinGroup
// protocol metadata, and what it is assigned, in its SyncGroup assignment.
// Classic members of a consumer group and groups that migrate between the
// protocols are read and written with it.

// maxConsumerProtocolVersion is the newest ConsumerProtocolAssignment
// version; an assignment goes out in the version of the member's
// subscription, at most this one.
const maxConsumerProtocolVersion = 3

// classicProtocolsOf is a JoinGroup's protocols as a member record holds
// them.
func classicProtocolsOf(ps []kmsg.JoinGroupRequestProtocol) []classicProtocol {
	out := make([]classicProtocol, len(ps))
	for i, p := range ps {
		out[i] = classicProtocol{Name: p.Name, Metadata: p.Metadata}
	}
	return out
}

// readSubscription parses a consumer-protocol subscription. Every protocol
// of a member carries the same one. A subscription that says a version
// but holds only the fields of version 0 (kafka-go writes version 1
// without owned partitions) is read as what it holds: Kafka refuses it,
// which leaves such a client out of every consumer group.
func readSubscription(raw []byte) (*kmsg.ConsumerMemberMetadata, error) {
	meta := new(kmsg.ConsumerMemberMetadata)
	err := meta.ReadFrom(raw)
	if err != nil && len(raw) >= 2 {
		v0 := append([]byte{0, 0}, raw[2:]...)
		if meta.Default(); meta.ReadFrom(v0) == nil {
			meta.Version, err = subscriptionVersion(raw), nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("its consumer protocol subscription does not parse: %v", err)
	}
	if meta.Version < 0 {
		return nil, fmt.Errorf("its consumer protocol subscription has version %d", meta.Version)
	}
	return meta, nil
}

// ownedOf is what a subscription says its member owns, by topic id as
// view names the topics; partitions of topics that do not exist drop out.
func ownedOf(meta *kmsg.ConsumerMemberMetadata, view TopicsView) assignor.Assignment {
	var l []topicPartitions
	for _, o := range meta.OwnedPartitions {
		if id, _, ok := view.Topic(o.Topic); ok {
			l = append(l, topicPartitions{TopicID: id, Partitions: o.Partitions})
		}
	}
	return assignmentOf(l)
}

// classicAssignment is a as a classic member's SyncGroup assignment, topics
// by name (ascending) as view names them, in the version of the member's
// subscription (subscription).
func classicAssignment(a assignor.Assignment, view TopicsView, subscription []byte) []byte {
	out := kmsg.ConsumerMemberAssignment{Version: subscriptionVersion(subscription)}
	for _, tp := range topicPartitionsOf(a) {
		if name, ok := view.TopicName(tp.TopicID); ok {
			out.Topics = append(out.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: name, Partitions: tp.Partitions})
		}
	}
	slices.SortFunc(out.Topics, func(x, y kmsg.ConsumerMemberAssignmentTopic) int {
		switch {
		case x.Topic < y.Topic:
			return -1
		case x.Topic > y.Topic:
			return 1
		}
		return 0
	})
	return out.AppendTo(nil)
}

// subscriptionVersion is the version a subscription is written in, within
// what an assignment can be written in (Kafka's deserializeVersion).
func subscriptionVersion(subscription []byte) int16 {
	if len(subscription) < 2 {
		return 0
	}
	return min(max(int16(uint16(subscription[0])<<8|uint16(subscription[1])), 0), maxConsumerProtocolVersion)
}

// errNoAssignment is a classic member's assignment that does not parse.
var errNoAssignment = errors.New("its consumer protocol assignment does not parse")

// readClassicAssignment parses a classic member's SyncGroup assignment, by
// topic id as view names the topics: topics that do not exist and
// partitions out of their range drop out. A member that has not synced
// yet has an empty one: it holds nothing.
func readClassicAssignment(raw []byte, view TopicsView) (assignor.Assignment, error) {
	if len(raw) == 0 {
		return assignor.Assignment{}, nil
	}
	var in kmsg.ConsumerMemberAssignment
	if err := in.ReadFrom(raw); err != nil || in.Version < 0 {
		return nil, errNoAssignment
	}
	var l []topicPartitions
	for _, t := range in.Topics {
		id, partitions, ok := view.Topic(t.Topic)
		if !ok {
			continue
		}
		ps := slices.DeleteFunc(slices.Clone(t.Partitions), func(p int32) bool { return p < 0 || p >= partitions })
		l = append(l, topicPartitions{TopicID: id, Partitions: ps})
	}
	return assignmentOf(l), nil
}

// withoutHeld is a with the partitions that held reports another member
// holding taken out: two classic members that claim a partition (a
// leader's broken assignment) do not both get it.
func withoutHeld(a assignor.Assignment, held func(base.TopicID, int32) bool) assignor.Assignment {
	out := assignor.Assignment{}
	for t, ps := range a {
		kept := slices.DeleteFunc(slices.Clone(ps), func(p int32) bool { return held(t, p) })
		if len(kept) > 0 {
			out[t] = kept
		}
	}
	return out
}
