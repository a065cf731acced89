package api

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/metadata"
)

// placeableBrokers are the brokers new replicas can be placed on: the
// unfenced registered brokers of a cluster, or this broker alone on a node
// where none has registered (a single node).
func (h *Handler) placeableBrokers(img *metadata.Image) []int32 {
	if len(img.Brokers) == 0 {
		return []int32{h.opts.Broker.NodeID()}
	}
	return img.UnfencedBrokers()
}

// checkReplicationFactor refuses a replication factor the live brokers
// cannot hold (Kafka's INVALID_REPLICATION_FACTOR).
func (h *Handler) checkReplicationFactor(topic string, rf int16) error {
	live := len(h.placeableBrokers(h.opts.Meta.Image()))
	switch {
	case rf <= 0:
		return &topicCreateError{kerr.InvalidReplicationFactor.Code,
			fmt.Sprintf("topic %s: replication factor must be at least 1, got %d", topic, rf)}
	case int(rf) > live:
		return &topicCreateError{kerr.InvalidReplicationFactor.Code,
			fmt.Sprintf("topic %s: replication factor %d needs %d live brokers, and %d %s live; use at most %d",
				topic, rf, rf, live, plural(live, "is", "are"), live)}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkAssignment checks a manual replica assignment of CreateTopics and
// returns its replica lists by partition: the partitions are 0, 1, ...,
// each once, in any order (Kafka takes any; sarama sends a map's), each
// naming distinct registered brokers (this broker alone on a single node),
// all partitions as many.
func (h *Handler) checkAssignment(as []kmsg.CreateTopicsRequestTopicReplicaAssignment) ([][]int32, int16, string) {
	lists, code, msg := assignmentByPartition(as)
	if code != 0 {
		return nil, code, msg
	}
	img := h.opts.Meta.Image()
	for p, replicas := range lists {
		if len(img.Brokers) == 0 {
			if len(replicas) != 1 || replicas[0] != h.opts.Broker.NodeID() {
				return nil, kerr.InvalidReplicaAssignment.Code, "every partition must be assigned to exactly this broker in a one-broker cluster"
			}
			continue
		}
		if code, msg := checkReplicaList(img, int32(p), replicas, len(lists[0])); code != 0 {
			return nil, code, msg
		}
	}
	return lists, 0, ""
}

// assignmentByPartition orders a manual assignment's replica lists by
// partition; the partitions must be 0 to n-1, each once.
func assignmentByPartition(as []kmsg.CreateTopicsRequestTopicReplicaAssignment) ([][]int32, int16, string) {
	lists := make([][]int32, len(as))
	for _, a := range as {
		switch {
		case a.Partition < 0 || int(a.Partition) >= len(as):
			return nil, kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("the assignment lists partition %d of %d; number the partitions 0 to %d", a.Partition, len(as), len(as)-1)
		case lists[a.Partition] != nil:
			return nil, kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("the assignment lists partition %d twice", a.Partition)
		}
		lists[a.Partition] = slices.Clone(a.Replicas)
		if lists[a.Partition] == nil {
			lists[a.Partition] = []int32{} // listed, with no replicas: checked below
		}
	}
	return lists, 0, ""
}

// checkReplicaList checks one partition's replicas in a cluster.
func checkReplicaList(img *metadata.Image, partition int32, replicas []int32, want int) (int16, string) {
	if len(replicas) == 0 || len(replicas) != want {
		return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("partition %d has %d replicas and partition 0 has %d; every partition needs the same number, at least 1", partition, len(replicas), want)
	}
	for j, r := range replicas {
		if slices.Contains(replicas[:j], r) {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("partition %d names broker %d twice", partition, r)
		}
		if _, ok := img.Brokers[r]; !ok {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("partition %d names broker %d, which is not registered", partition, r)
		}
	}
	return 0, ""
}
