package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/share/leader"
)

// DescribeShareGroupOffsets (KIP-932): where share groups are in their
// partitions: each partition's start offset and leader epoch from its
// share coordinator, and (v1, KIP-1226) its lag, the records not yet
// delivered for good (the end offset less the start offset and the
// records past it already acknowledged or archived). Versions 0-1. The
// group coordinator lists the partitions (all those the group has state
// for when it names no topics). As Kafka: DESCRIBE on the group
// (GROUP_AUTHORIZATION_FAILED), DESCRIBE on each topic (named topics:
// TOPIC_AUTHORIZATION_FAILED; all topics: the others are left out); a
// partition without state has start offset -1 and no error.
func init() { register(90, 0, groupMax(90), (*Handler).handleDescribeShareGroupOffsets) }

func (h *Handler) handleDescribeShareGroupOffsets(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeShareGroupOffsetsRequest)
	if !shareGroupsOn(h.opts.Meta.Image()) {
		return done(group.ErrorResponse(r, kerr.UnsupportedVersion.Code))
	}
	ids := make([]string, len(r.Groups))
	byID := map[string]kmsg.DescribeShareGroupOffsetsRequestGroup{}
	for i, g := range r.Groups {
		ids[i], byID[g.GroupID] = g.GroupID, g
	}
	allowed, denied := partitionKeys(ids, func(g string) bool { return h.allowedGroup(req, acl.OpDescribe, g) })
	byPart, ok := h.groups.split(allowed)
	if !ok {
		return done(group.ErrorResponse(r, kerr.NotCoordinator.Code))
	}
	wait := h.groups.fanOut(req, byPart, func(groupIDs []string) kmsg.Request {
		sub := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		for _, id := range groupIDs {
			sub.Groups = append(sub.Groups, byID[id])
		}
		return sub
	})
	return Reply{Wait: func() kmsg.Response {
		var answers []kmsg.DescribeShareGroupOffsetsResponseGroup
		for _, id := range denied {
			g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			g.GroupID, g.ErrorCode = id, groupDenied
			answers = append(answers, g)
		}
		for _, sub := range wait(ctx) {
			for _, g := range sub.(*kmsg.DescribeShareGroupOffsetsResponse).Groups {
				answers = append(answers, h.shareOffsetsOf(ctx, req, byID[g.GroupID].Topics == nil, g))
			}
		}
		resp := r.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
		resp.Groups = inRequestOrder(ids, answers, func(g kmsg.DescribeShareGroupOffsetsResponseGroup) string { return g.GroupID })
		return resp
	}}
}

// shareOffsetsOf fills in a group's partitions from their share
// coordinators, as req's principal may see them.
func (h *Handler) shareOffsetsOf(ctx context.Context, req *Request, allTopics bool, g kmsg.DescribeShareGroupOffsetsResponseGroup) kmsg.DescribeShareGroupOffsetsResponseGroup {
	if g.ErrorCode != 0 {
		return g
	}
	img := h.opts.Meta.Image()
	topics := g.Topics[:0]
	for _, t := range g.Topics {
		if !h.allowedTopic(req, acl.OpDescribe, t.Topic) {
			if allTopics {
				continue
			}
			t.TopicID = [16]byte{}
			for i := range t.Partitions {
				t.Partitions[i].ErrorCode = topicDenied
			}
			topics = append(topics, t)
			continue
		}
		meta := img.TopicsByID[base.TopicID(t.TopicID)]
		for i := range t.Partitions {
			if meta != nil {
				h.fillShareOffset(ctx, req.Version, g.GroupID, meta, &t.Partitions[i])
			}
		}
		topics = append(topics, t)
	}
	g.Topics = topics
	return g
}

// fillShareOffset sets a partition's start offset, leader epoch and lag
// from its share coordinator; a partition without state, or whose
// coordinator does not answer, keeps start offset -1 (as Kafka: the
// absence of data is no error).
func (h *Handler) fillShareOffset(ctx context.Context, version int16, groupID string, t *metadata.Topic, p *kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition) {
	if p.Partition < 0 || int(p.Partition) >= len(t.Partitions) {
		return
	}
	s, err := sharePersister{h}.summary(ctx, leader.Key{Group: groupID, Topic: t.ID, Partition: p.Partition})
	if err != nil || !s.ok {
		p.LeaderEpoch = 0
		return
	}
	p.StartOffset, p.LeaderEpoch = int64(s.startOffset), s.leaderEpoch
	if version < 1 || s.completed < 0 {
		return
	}
	end, err := h.partitionEnd(ctx, t, p.Partition)
	if err != nil {
		p.ErrorCode = shareErrorCode(err)
		p.ErrorMessage = kmsg.StringPtr(err.Error())
		return
	}
	p.Lag = max(int64(end)-int64(s.startOffset)-s.completed, 0)
}
