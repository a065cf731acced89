package group

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// TopicsView is the topic metadata consumer groups subscribe to and are
// assigned from: the broker's metadata image, read when a request is
// handled.
type TopicsView interface {
	// Topic is the id and partition count of the topic called name, if
	// it exists.
	Topic(name string) (id base.TopicID, partitions int32, ok bool)
	// TopicName is the name of the topic with id, if it exists.
	TopicName(id base.TopicID) (string, bool)
	// Names is the names of the topics a regular expression may match:
	// every topic, the internal ones too (as Kafka's coordinator), in
	// ascending order.
	Names() []string
	// Version moves on whenever the topics change (the metadata image's
	// version).
	Version() int64
}

// consumerWrite is what one request writes for consumer group id: each
// record is applied to the group as it is written, so the group is always
// what its records say (Kafka's coordinators replay what they write).
type consumerWrite struct {
	id      string
	cg      *consumerGroup // nil once a tombstone deleted the group
	records []runtime.Record
}

// write appends one record and applies it. A record this package built
// that does not apply is its own bug.
func (w *consumerWrite) write(key, value []byte) {
	k, err := readConsumerKey(key)
	if err == nil {
		w.cg, err = replayConsumer(w.cg, k, value)
	}
	if err != nil {
		panic(fmt.Sprintf("group: consumer group %q: a record of ours does not apply: %v", w.id, err))
	}
	w.records = append(w.records, runtime.Record{Key: key, Value: value})
}

// assignTargets computes the target assignment of the group's epoch and
// writes it (Kafka's TargetAssignmentBuilder): the members whose target
// changed, then the target epoch.
func (w *consumerWrite) assignTargets(view TopicsView, assignors []string, now time.Time) {
	cg := w.cg
	next := cg.preferredAssignor(assignors).Assign(cg.assignmentSpec(view))
	for _, id := range cg.memberIDs() {
		if target := next[id]; !target.Equal(cg.targets[id]) {
			w.write(targetAssignmentMemberKey(w.id, id), targetAssignmentMemberValue(targetAssignmentMember{TopicPartitions: topicPartitionsOf(target)}))
		}
	}
	w.write(targetAssignmentMetadataKey(w.id), targetAssignmentMetadataValue(targetAssignmentMetadata{
		AssignmentEpoch: cg.epoch, AssignmentTimestampMs: now.UnixMilli()}))
}

// subscribedNames is the topic names m subscribes to: its names, and the
// topics its regular expression resolved to, ascending, each once.
func (cg *consumerGroup) subscribedNames(m *consumerMember) []string {
	names := slices.Clone(m.topics)
	if m.regex != nil {
		names = append(names, cg.regexes[*m.regex].Topics...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// subscribedTopics is the topic names the group's members subscribe to,
// by name or regular expression (Kafka's subscribedTopicNames).
func (cg *consumerGroup) subscribedTopics() map[string]bool {
	topics := map[string]bool{}
	for _, name := range cg.topicNames() {
		topics[name] = true
	}
	return topics
}

// topicNames is the topic names the group's members subscribe to, by
// name or through the resolutions of their regular expressions,
// ascending, each once.
func (cg *consumerGroup) topicNames() []string {
	names := slices.Collect(maps.Keys(cg.subscribers))
	for expr := range cg.regexUsers {
		names = append(names, cg.regexes[expr].Topics...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// assignmentSpec is the assignor's input: every member (ascending by id)
// with the existing topics it subscribes to and its current target.
func (cg *consumerGroup) assignmentSpec(view TopicsView) assignor.Spec {
	spec := assignor.Spec{Topics: map[base.TopicID]assignor.Topic{}}
	for _, id := range cg.memberIDs() {
		var subs []base.TopicID
		for _, name := range cg.subscribedNames(cg.members[id]) {
			tid, partitions, ok := view.Topic(name)
			if !ok {
				continue
			}
			subs = append(subs, tid)
			spec.Topics[tid] = assignor.Topic{Name: name, Partitions: partitions}
		}
		slices.SortFunc(subs, func(a, b base.TopicID) int { return slices.Compare(a[:], b[:]) })
		spec.Members = append(spec.Members, assignor.Member{ID: id, Subscribed: slices.Compact(subs), Current: cg.targets[id]})
	}
	return spec
}

// subscriptionHash hashes the metadata of the existing topics the group
// subscribes to (name, id, partition count): when it changes (a topic
// created, deleted or extended), the group epoch moves on and the target
// is assigned again. 0 when the group subscribes to no existing topic, as
// a new group's. Kafka (KIP-1101) hashes per topic with Murmur3 and racks;
// the value is only ever compared with this broker's own.
func (cg *consumerGroup) subscriptionHash(view TopicsView) int64 {
	return topicsHash(view, cg.topicNames())
}

// topicsHash hashes the metadata of the existing topics among names
// (ascending): 0 when none exists.
func topicsHash(view TopicsView, names []string) int64 {
	h := fnv.New64a()
	found := false
	for _, name := range names {
		tid, partitions, ok := view.Topic(name)
		if !ok {
			continue
		}
		found = true
		h.Write(binary.BigEndian.AppendUint16(nil, uint16(len(name))))
		h.Write([]byte(name))
		h.Write(tid[:])
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(partitions)))
	}
	if !found {
		return 0
	}
	return int64(h.Sum64())
}

// preferredAssignor is the server assignor the group uses, among those
// offered (group.consumer.assignors, the first the default): the one most
// of its members name, else the default (a tie goes to the default, then
// to the lower name, where Kafka follows a hash map's order).
func (cg *consumerGroup) preferredAssignor(offered []string) assignor.Assignor {
	votes := map[string]int{}
	for _, m := range cg.members {
		if m.serverAssignor != nil {
			votes[*m.serverAssignor]++
		}
	}
	best := offered[0]
	for _, name := range slices.Sorted(slices.Values(offered)) {
		if votes[name] > votes[best] {
			best = name
		}
	}
	a, ok := assignor.ByName(best)
	if !ok {
		panic("group: an offered server assignor that does not exist: " + best)
	}
	return a
}
