package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/group"
	"github.com/strata-broker/strata/internal/share/leader"
)

// AlterShareGroupOffsets (KIP-932, `kafka-share-groups --reset-offsets`):
// sets where an empty share group starts in partitions. Version 0. The
// group coordinator checks the group (created if it does not exist; an
// empty share group, NON_EMPTY_GROUP otherwise) and the partitions
// (UNKNOWN_TOPIC_OR_PARTITION); each accepted partition's state is then
// initialized at its share coordinator with the new start offset, at a
// state epoch above the one it had, so that a leader still holding the old
// state is fenced and loads the new one. As Kafka: READ on the group
// (GROUP_AUTHORIZATION_FAILED) and on each topic (TOPIC_AUTHORIZATION_FAILED).
func init() { register(91, 0, groupMax(91), (*Handler).handleAlterShareGroupOffsets) }

func (h *Handler) handleAlterShareGroupOffsets(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AlterShareGroupOffsetsRequest)
	if !shareGroupsOn(h.opts.Meta.Image()) {
		return done(group.ErrorResponse(r, kerr.UnsupportedVersion.Code))
	}
	if !h.allowedGroup(req, acl.OpRead, r.GroupID) {
		return done(group.ErrorResponse(r, groupDenied))
	}
	allowed := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	allowed.GroupID = r.GroupID
	var denied []kmsg.AlterShareGroupOffsetsResponseTopic
	for _, t := range r.Topics {
		if h.allowedTopic(req, acl.OpRead, t.Topic) {
			allowed.Topics = append(allowed.Topics, t)
			continue
		}
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, topicDenied
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	return h.groups.replyThen(ctx, req, r.GroupID, allowed, func(kr kmsg.Response) kmsg.Response {
		resp := kr.(*kmsg.AlterShareGroupOffsetsResponse)
		if resp.ErrorCode == 0 {
			h.initializeShareOffsets(ctx, r, resp)
		}
		resp.Topics = append(resp.Topics, denied...)
		return resp
	})
}

// initializeShareOffsets writes the accepted partitions' new start offsets
// at their share coordinators; a partition whose write fails gets its
// error.
func (h *Handler) initializeShareOffsets(ctx context.Context, r *kmsg.AlterShareGroupOffsetsRequest, resp *kmsg.AlterShareGroupOffsetsResponse) {
	starts := map[string]map[int32]int64{}
	for _, t := range r.Topics {
		starts[t.Topic] = map[int32]int64{}
		for _, p := range t.Partitions {
			starts[t.Topic][p.Partition] = p.StartOffset
		}
	}
	persister := sharePersister{h}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.ErrorCode != 0 {
				continue
			}
			key := leader.Key{Group: r.GroupID, Topic: base.TopicID(t.TopicID), Partition: p.Partition}
			s, err := persister.summary(ctx, key)
			if err == nil {
				err = persister.Initialize(ctx, key, s.stateEpoch+1, base.Offset(starts[t.Topic][p.Partition]))
			}
			if err != nil {
				p.ErrorCode = shareErrorCode(err)
				p.ErrorMessage = kmsg.StringPtr(err.Error())
			}
		}
	}
	h.shares.DropGroup(r.GroupID)
}
