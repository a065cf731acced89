package group

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// The share group offset APIs (KIP-932): the group coordinator answers
// what it knows (which partitions a group has delivery state for, whether
// the group may be changed), and the broker then reads, initializes or
// deletes that state at the share coordinator.

// describeShareGroupOffsets answers with the partitions of each group, each
// StartOffset -1 and Lag -1 for the broker to fill in: the requested ones
// (a topic that does not exist gets no topic id), or, when a group names
// no topics, every partition the group has state for (none for a group
// that is not a share group, as Kafka: no error).
func (c *Coordinator) describeShareGroupOffsets(req *kmsg.DescribeShareGroupOffsetsRequest) *kmsg.DescribeShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	view := c.opts.Topics()
	for _, rg := range req.Groups {
		g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		g.GroupID = rg.GroupID
		g.Topics = []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{}
		if rg.Topics == nil {
			if sg := c.shares[rg.GroupID]; sg != nil {
				for _, id := range sortedTopicIDs(sg.stateTopics) {
					name, ok := view.TopicName(id)
					if !ok {
						continue
					}
					g.Topics = append(g.Topics, describedShareTopic(name, id, sg.stateTopics[id].Partitions))
				}
			}
		}
		for _, rt := range rg.Topics {
			id, _, _ := view.Topic(rt.Topic)
			g.Topics = append(g.Topics, describedShareTopic(rt.Topic, id, rt.Partitions))
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp
}

func describedShareTopic(name string, id base.TopicID, partitions []int32) kmsg.DescribeShareGroupOffsetsResponseGroupTopic {
	t := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
	t.Topic, t.TopicID = name, id
	for _, p := range partitions {
		dp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
		dp.Partition, dp.StartOffset, dp.Lag = p, -1, -1
		t.Partitions = append(t.Partitions, dp)
	}
	return t
}

func sortedTopicIDs(m map[base.TopicID]shareTopicPartitions) []base.TopicID {
	return slices.SortedFunc(maps.Keys(m), func(a, b base.TopicID) int { return slices.Compare(a[:], b[:]) })
}

// shareGroupToChange is the share group a request that changes its state
// may change: it must be a share group (or not exist, when create) without
// members. A refusal is a top-level error code and message.
func (c *Coordinator) shareGroupToChange(id string, create bool) (*shareGroup, int16, string) {
	sg := c.shares[id]
	switch {
	case id == "":
		return nil, kerr.InvalidGroupID.Code, "The group id must not be empty."
	case sg == nil && c.groups[id] != nil && !c.groups[id].garbage():
		return nil, kerr.GroupIDNotFound.Code, fmt.Sprintf("Group %s is not a share group.", id)
	case sg == nil && !create:
		return nil, kerr.GroupIDNotFound.Code, fmt.Sprintf("Group %s not found.", id)
	case sg == nil:
		return newShareGroup(), 0, ""
	case len(sg.members) > 0:
		return nil, kerr.NonEmptyGroup.Code, "The group has members; share group offsets can only be changed when it is empty."
	}
	return sg, 0, ""
}

// alterShareGroupOffsets checks an AlterShareGroupOffsets as Kafka's
// coordinator does (the group is created if it does not exist; it must be
// an empty share group; every partition must exist) and records the
// partitions it may set among those the group has state for. The broker
// then initializes each partition answered without error at its start
// offset.
func (c *Coordinator) alterShareGroupOffsets(op runtime.Op, req *kmsg.AlterShareGroupOffsetsRequest, now time.Time, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	sg, code, msg := c.shareGroupToChange(req.GroupID, true)
	if code != 0 {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		reply(res, op.Token, resp)
		return
	}
	view := c.opts.Topics()
	added := map[base.TopicID]shareTopicPartitions{}
	for _, rt := range req.Topics {
		t := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		t.Topic = rt.Topic
		id, count, ok := view.Topic(rt.Topic)
		if ok {
			t.TopicID = id
		}
		for _, rp := range rt.Partitions {
			p := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			p.Partition = rp.Partition
			if !ok || rp.Partition < 0 || rp.Partition >= count {
				p.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				added[id] = mergeStateTopic(added[id], shareTopicPartitions{TopicID: id, TopicName: rt.Topic, Partitions: []int32{rp.Partition}, CreateTimestampMs: now.UnixMilli()})
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	w := shareWrite{id: req.GroupID, sg: sg}
	w.putStateTopics(added)
	c.applyShareWrite(&w, res)
	reply(res, op.Token, resp)
}

// deleteShareGroupOffsets checks a DeleteShareGroupOffsets (an existing,
// empty share group; each topic must exist and have state) and forgets the
// topics it may delete; the broker then deletes the state of every
// partition of each topic answered without error.
func (c *Coordinator) deleteShareGroupOffsets(op runtime.Op, req *kmsg.DeleteShareGroupOffsetsRequest, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	sg, code, msg := c.shareGroupToChange(req.GroupID, false)
	if code != 0 {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		reply(res, op.Token, resp)
		return
	}
	view := c.opts.Topics()
	kept := maps.Clone(sg.stateTopics)
	for _, rt := range req.Topics {
		t := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		t.Topic = rt.Topic
		id, _, ok := view.Topic(rt.Topic)
		_, has := kept[id]
		switch {
		case !ok:
			t.ErrorCode = kerr.UnknownTopicOrPartition.Code
		case !has:
			t.ErrorCode, t.ErrorMessage = kerr.UnknownTopicOrPartition.Code, kmsg.StringPtr("There is no offset information to delete.")
		default:
			t.TopicID = id
			delete(kept, id)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if len(kept) != len(sg.stateTopics) {
		w := shareWrite{id: req.GroupID, sg: sg}
		w.writeStateTopics(kept)
		c.applyShareWrite(&w, res)
	}
	reply(res, op.Token, resp)
}

// putStateTopics writes the group's state partitions with added merged in,
// if that adds any.
func (w *shareWrite) putStateTopics(added map[base.TopicID]shareTopicPartitions) {
	merged := maps.Clone(w.sg.stateTopics)
	if merged == nil {
		merged = map[base.TopicID]shareTopicPartitions{}
	}
	grew := false
	for id, t := range added {
		before := len(merged[id].Partitions)
		merged[id] = mergeStateTopic(merged[id], t)
		grew = grew || len(merged[id].Partitions) > before
	}
	if grew {
		w.writeStateTopics(merged)
	}
}

// writeStateTopics writes the group's state partitions as topics (a
// tombstone when there are none).
func (w *shareWrite) writeStateTopics(topics map[base.TopicID]shareTopicPartitions) {
	if len(topics) == 0 {
		w.write(shareStatePartitionMetadataKey(w.id), nil)
		return
	}
	var v shareStatePartitionMetadata
	for _, id := range sortedTopicIDs(topics) {
		v.InitializedTopics = append(v.InitializedTopics, topics[id])
	}
	w.write(shareStatePartitionMetadataKey(w.id), shareStatePartitionMetadataValue(v))
}
