// Package admin holds the Kafka admin requests that the bench clients
// (bench/remoteread, bench/tierlag) share. Answers are checked before
// they are used: a missing topic or partition, or a partition that was
// not asked for, is an error, never a zero offset.
package admin

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopic creates topic with partitions partitions, replication
// factor 1 and configs.
func CreateTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, configs map[string]*string) error {
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

// ListOffsets asks ListOffsets with timestamp ts (a time, or a special
// value such as -1 for the high watermark) for partitions [0, partitions)
// of topic, and returns each partition's offset, indexed by partition.
func ListOffsets(ctx context.Context, cl *kgo.Client, topic string, partitions int32, ts int64) ([]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, ts
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("ListOffsets %d of %s: %w", ts, topic, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != int(partitions) {
		return nil, fmt.Errorf("ListOffsets %d of %s: %d topics in the answer, want 1 with %d partitions", ts, topic, len(resp.Topics), partitions)
	}
	out := make([]int64, partitions)
	answered := make([]bool, partitions)
	for _, p := range resp.Topics[0].Partitions {
		if p.Partition < 0 || p.Partition >= partitions || answered[p.Partition] {
			return nil, fmt.Errorf("ListOffsets %d of %s: unexpected partition %d in the answer", ts, topic, p.Partition)
		}
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			return nil, fmt.Errorf("ListOffsets %d of %s-%d: %w", ts, topic, p.Partition, err)
		}
		out[p.Partition], answered[p.Partition] = p.Offset, true
	}
	return out, nil
}
