package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientRequestsCheckTheLeaderEpoch: a consumer's Fetch, ListOffsets
// and OffsetForLeaderEpoch carry the leader epoch it last saw (KIP-320);
// an older one than the partition's is FENCED_LEADER_EPOCH (the client
// refreshes its metadata instead of reading from a deposed leader), a
// newer one UNKNOWN_LEADER_EPOCH (this broker has not heard of it yet),
// and -1 or the current epoch are served.
func TestClientRequestsCheckTheLeaderEpoch(t *testing.T) {
	rh := newReplicaHarness(t, nil)
	rh.createTopic("epochs", nil, []int32{2, 1})
	rh.fence(2) // broker 1 takes over: leader epoch 1
	ours := int32(rh.partition("epochs", 0).Offsets().LeaderEpoch)
	if ours < 1 {
		t.Fatalf("leader epoch %d after the leader moved, want at least 1", ours)
	}
	topicID := rh.meta.Image().Topics["epochs"].ID
	requests := map[string]func(epoch int32) int16{
		"Fetch v12": func(epoch int32) int16 {
			r := kmsg.NewPtrFetchRequest()
			r.ReplicaID, r.MaxWaitMillis, r.MaxBytes = -1, 0, 1<<20
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = "epochs", topicID
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.PartitionMaxBytes = epoch, -1, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return onlyPartition(t, rh.handle(1, 12, r, "User:ANONYMOUS").(*kmsg.FetchResponse)).ErrorCode
		},
		"ListOffsets v7": func(epoch int32) int16 {
			r := kmsg.NewPtrListOffsetsRequest()
			r.ReplicaID = -1
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = "epochs"
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.CurrentLeaderEpoch, rp.Timestamp = epoch, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return rh.handle(2, 7, r, "User:ANONYMOUS").(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode
		},
		"OffsetForLeaderEpoch v4": func(epoch int32) int16 {
			r := kmsg.NewPtrOffsetForLeaderEpochRequest()
			r.ReplicaID = -1
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = "epochs"
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rp.CurrentLeaderEpoch, rp.LeaderEpoch = epoch, 0
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return rh.handle(23, 4, r, "User:ANONYMOUS").(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
		},
	}
	for name, send := range requests {
		for _, tc := range []struct {
			epoch int32
			want  int16
		}{
			{-1, 0},
			{ours, 0},
			{ours - 1, kerr.FencedLeaderEpoch.Code},
			{ours + 1, kerr.UnknownLeaderEpoch.Code},
		} {
			if got := send(tc.epoch); got != tc.want {
				t.Errorf("%s at leader epoch %d (the partition's is %d): error %d, want %d", name, tc.epoch, ours, got, tc.want)
			}
		}
	}
}
