package e2e

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerFetch builds a consumer's Fetch of one topic (named by name and
// id; the version sent decides which counts) from the given offsets, in
// partition order, each partition allowed partitionMaxBytes: min.bytes 1,
// max.wait 5 s, no session. No offsets: no topic. Callers change what
// their case needs.
func consumerFetch(topic string, topicID [16]byte, offsets map[int32]int64, partitionMaxBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 5000, 1, 50<<20
	if len(offsets) == 0 {
		return req
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	for _, p := range slices.Sorted(maps.Keys(offsets)) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, offsets[p], partitionMaxBytes
		rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}
