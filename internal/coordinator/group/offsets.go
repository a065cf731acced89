package group

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

func (c *Coordinator) offsetCommit(op runtime.Op, req *kmsg.OffsetCommitRequest, now time.Time, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	defer reply(res, op.Token, resp)
	g, m, verdict := c.validateCommit(req, now)
	for _, t := range req.Topics {
		rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
		for _, p := range t.Partitions {
			pc := verdict.partition(c.opts.Topics, t.Topic, p.Partition)
			if pc == 0 && p.Metadata != nil && len(*p.Metadata) > c.opts.OffsetMetadataMaxBytes {
				pc = kerr.OffsetMetadataTooLarge.Code
			}
			if pc == 0 {
				e := offsetEntry{offset: base.Offset(p.Offset), committed: time.UnixMilli(now.UnixMilli())}
				if p.Metadata != nil {
					e.metadata = *p.Metadata
				}
				if req.Version >= 6 && p.LeaderEpoch >= 0 {
					e.leaderEpoch, e.hasEpoch = base.Epoch(p.LeaderEpoch), true
				}
				c.writeOffset(g, base.TopicPartition{Topic: t.Topic, Partition: p.Partition}, e, res)
			}
			rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: pc})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if m != nil {
		m.session = armAt(now.Add(m.sessionTimeout))
	}
	if g != nil {
		c.dropIfGarbage(g)
	}
}

// validateCommit is Kafka's validateOffsetCommit. It returns the group to
// commit into (created for a simple commit), the committing classic
// member, if any, and the verdict on the partitions.
func (c *Coordinator) validateCommit(req *kmsg.OffsetCommitRequest, now time.Time) (*group, *member, commitVerdict) {
	if req.Group == "" {
		return nil, nil, refuse(kerr.InvalidGroupID.Code)
	}
	g, ok := c.groups[req.Group]
	if !ok {
		if req.Generation >= 0 {
			if req.Version >= 9 {
				return nil, nil, refuse(kerr.GroupIDNotFound.Code)
			}
			return nil, nil, refuse(kerr.IllegalGeneration.Code)
		}
		g = newGroup(req.Group, now)
		c.groups[req.Group] = g
	}
	if g.consumer != nil {
		return g, nil, g.consumer.commitCheck(req.MemberID, req.InstanceID, req.Generation, false, req.Version)
	}
	if req.Generation < 0 && g.state == stateEmpty {
		return g, nil, commitVerdict{} // a simple commit: admin tools, manual assignment
	}
	var m *member
	if req.Generation >= 0 || req.MemberID != "" || req.InstanceID != nil {
		var code int16
		if m, code = validMember(g, req.MemberID, req.InstanceID); code != 0 {
			return g, nil, refuse(code)
		}
		if req.Generation != g.generation {
			return g, nil, refuse(kerr.IllegalGeneration.Code)
		}
	} else if g.state != stateEmpty {
		return g, nil, refuse(kerr.UnknownMemberID.Code)
	}
	if g.state == stateCompletingRebalance {
		return g, nil, refuse(kerr.RebalanceInProgress.Code)
	}
	return g, m, commitVerdict{}
}

func (c *Coordinator) offsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version < 8 {
		var topics []kmsg.OffsetFetchRequestGroupTopic
		for _, t := range req.Topics {
			topics = append(topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
		all := req.Topics == nil && req.Version >= 2
		fg := c.fetchGroup(kmsg.OffsetFetchRequestGroup{Group: req.Group, Topics: topics, MemberEpoch: -1}, all, requireStable(req))
		for _, t := range fg.Topics {
			rt := kmsg.OffsetFetchResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetFetchResponseTopicPartition{
					Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch,
					Metadata: p.Metadata, ErrorCode: p.ErrorCode,
				})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		resp.ErrorCode = fg.ErrorCode
		return resp
	}
	for _, rg := range req.Groups {
		resp.Groups = append(resp.Groups, c.fetchGroup(rg, rg.Topics == nil, requireStable(req)))
	}
	return resp
}

// requireStable: RequireStable exists from v7 (KIP-447); older versions
// never wait for pending transactional offsets.
func requireStable(req *kmsg.OffsetFetchRequest) bool {
	return req.Version >= 7 && req.RequireStable
}

// fetchGroup answers one group of an OffsetFetch. A partition without a
// committed offset answers offset -1 (the wire's "none"); all=true lists
// every committed partition. With stable, a partition that has a pending
// transactional offset answers UNSTABLE_OFFSET_COMMIT instead (the client
// retries until the transaction ends), as Kafka's fetchOffsets does. A
// consumer-protocol group checks the member the request names (v9+).
func (c *Coordinator) fetchGroup(rg kmsg.OffsetFetchRequestGroup, all, stable bool) kmsg.OffsetFetchResponseGroup {
	out := kmsg.OffsetFetchResponseGroup{Group: rg.Group}
	topics := rg.Topics
	g := c.groups[rg.Group]
	if g != nil && g.consumer != nil {
		if out.ErrorCode = g.consumer.fetchCheck(rg.MemberID, rg.MemberEpoch); out.ErrorCode != 0 {
			return out
		}
	}
	if all {
		if g == nil {
			return out
		}
		byTopic := map[string][]int32{}
		for tp := range g.offsets {
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		topics = nil
		for _, t := range slices.Sorted(maps.Keys(byTopic)) {
			slices.Sort(byTopic[t])
			topics = append(topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t, Partitions: byTopic[t]})
		}
	}
	for _, t := range topics {
		rt := kmsg.OffsetFetchResponseGroupTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := kmsg.OffsetFetchResponseGroupTopicPartition{Partition: p, Offset: -1, LeaderEpoch: -1, Metadata: kmsg.StringPtr("")}
			tp := base.TopicPartition{Topic: t.Topic, Partition: p}
			if g != nil && stable && g.hasTxnOffset(tp) {
				rp.ErrorCode = kerr.UnstableOffsetCommit.Code
			} else if g != nil {
				if e, ok := g.offsets[tp]; ok {
					rp.Offset = int64(e.offset)
					rp.Metadata = kmsg.StringPtr(e.metadata)
					if e.hasEpoch {
						rp.LeaderEpoch = int32(e.leaderEpoch)
					}
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}

func (c *Coordinator) offsetDelete(op runtime.Op, req *kmsg.OffsetDeleteRequest, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	defer reply(res, op.Token, resp)
	g, ok := c.groups[req.Group]
	if !ok {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return
	}
	if g.state != stateEmpty && g.protocolType != consumerProtocolType {
		resp.ErrorCode = kerr.NonEmptyGroup.Code
		return
	}
	for _, t := range req.Topics {
		rt := kmsg.OffsetDeleteResponseTopic{Topic: t.Topic}
		subscribed := g.subscribedTo(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition}
			tp := base.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if subscribed {
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			} else if _, ok := g.offsets[tp]; ok || g.hasTxnOffset(tp) {
				// As Kafka: the tombstone also drops pending
				// transactional offsets of the partition.
				c.writeOffsetTombstone(g, tp, res)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	c.dropIfGarbage(g)
}

// expireOffsets is Kafka's offset retention (KIP-211): an empty group's
// offsets expire a retention period after it became empty; a simple
// group's, after their commit; a stable consumer group's offsets of topics
// it no longer subscribes to, after their commit. An empty group left
// without offsets is deleted. As in Kafka, an offset does not expire while
// its partition has a pending transactional offset (its tombstone would
// drop that), and a group holding pending transactional offsets is not
// deleted (KAFKA-19163).
func (c *Coordinator) expireOffsets(now time.Time, res *runtime.Result) {
	for _, id := range slices.Sorted(maps.Keys(c.groups)) {
		g := c.groups[id]
		since, ok := c.expiryBase(g)
		if ok {
			for _, tp := range sortedPartitions(g.offsets) {
				if t, ok := since(tp, g.offsets[tp]); ok && now.Sub(t) >= c.opts.OffsetsRetention && !g.hasTxnOffset(tp) {
					c.writeOffsetTombstone(g, tp, res)
				}
			}
		}
		if g.empty() && len(g.offsets) == 0 && len(g.txnOffsets) == 0 {
			if g.consumer != nil {
				c.dropConsumerState(g, res)
			}
			if g.persisted != nil {
				c.writeGroupTombstone(g, res)
			}
			delete(c.groups, id)
		}
	}
}

// expiryBase returns, for a group whose offsets can expire, the time each
// offset's retention counts from (false: this offset does not expire).
func (c *Coordinator) expiryBase(g *group) (func(base.TopicPartition, offsetEntry) (time.Time, bool), bool) {
	switch {
	case g.consumer != nil:
		subscribed := g.consumer.subscribedTopics()
		return func(tp base.TopicPartition, e offsetEntry) (time.Time, bool) {
			return e.committed, !subscribed[tp.Topic]
		}, true
	case g.protocolType == "":
		return func(_ base.TopicPartition, e offsetEntry) (time.Time, bool) { return e.committed, true }, true
	case g.state == stateEmpty:
		return func(_ base.TopicPartition, e offsetEntry) (time.Time, bool) {
			if g.hasStateSince {
				return g.stateSince, true
			}
			return e.committed, true
		}, true
	case g.protocolType == consumerProtocolType && g.subscribedKnown && g.state == stateStable:
		return func(tp base.TopicPartition, e offsetEntry) (time.Time, bool) {
			return e.committed, !g.subscribed[tp.Topic]
		}, true
	}
	return nil, false
}

func sortedPartitions(m map[base.TopicPartition]offsetEntry) []base.TopicPartition {
	return slices.SortedFunc(maps.Keys(m), func(a, b base.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
}
