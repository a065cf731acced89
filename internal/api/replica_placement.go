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

// checkAssignment checks a manual replica assignment of CreateTopics: each
// partition, numbered from 0 in order, names distinct registered brokers
// (this broker alone on a single node), all partitions as many.
func (h *Handler) checkAssignment(as []kmsg.CreateTopicsRequestTopicReplicaAssignment) (int16, string) {
	img := h.opts.Meta.Image()
	single := len(img.Brokers) == 0
	for i, a := range as {
		if a.Partition != int32(i) {
			return kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("the assignment lists partition %d where partition %d belongs; list partitions 0, 1, ... in order", a.Partition, i)
		}
		if single {
			if len(a.Replicas) != 1 || a.Replicas[0] != h.opts.Broker.NodeID() {
				return kerr.InvalidReplicaAssignment.Code, "every partition must be assigned to exactly this broker in a one-broker cluster"
			}
			continue
		}
		if code, msg := checkReplicaList(img, a.Partition, a.Replicas, len(as[0].Replicas)); code != 0 {
			return code, msg
		}
	}
	return 0, ""
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

// assignmentLists turns a checked manual assignment into metadata's form.
func assignmentLists(as []kmsg.CreateTopicsRequestTopicReplicaAssignment) [][]int32 {
	out := make([][]int32, len(as))
	for i, a := range as {
		out[i] = slices.Clone(a.Replicas)
	}
	return out
}
