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

// DeleteShareGroupOffsets (KIP-932, `kafka-share-groups --delete-offsets`):
// forgets where an empty share group is in topics, which it then starts
// again by share.auto.offset.reset. Version 0. The group coordinator
// checks the group (an existing, empty share group) and each topic
// (UNKNOWN_TOPIC_OR_PARTITION for one that does not exist or has no
// state); the state of every partition of each accepted topic is then
// deleted at its share coordinator. As Kafka: DELETE on the group
// (GROUP_AUTHORIZATION_FAILED), READ on each topic
// (TOPIC_AUTHORIZATION_FAILED).
func init() { register(92, 0, groupMax(92), (*Handler).handleDeleteShareGroupOffsets) }

func (h *Handler) handleDeleteShareGroupOffsets(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteShareGroupOffsetsRequest)
	if !shareGroupsOn(h.opts.Meta.Image()) {
		return done(group.ErrorResponse(r, kerr.UnsupportedVersion.Code))
	}
	if !h.allowedGroup(req, acl.OpDelete, r.GroupID) {
		return done(group.ErrorResponse(r, groupDenied))
	}
	allowed := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	allowed.GroupID = r.GroupID
	var denied []kmsg.DeleteShareGroupOffsetsResponseTopic
	for _, t := range r.Topics {
		if h.allowedTopic(req, acl.OpRead, t.Topic) {
			allowed.Topics = append(allowed.Topics, t)
			continue
		}
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, topicDenied
		denied = append(denied, rt)
	}
	return h.groups.replyThen(ctx, req, r.GroupID, allowed, func(kr kmsg.Response) kmsg.Response {
		resp := kr.(*kmsg.DeleteShareGroupOffsetsResponse)
		if resp.ErrorCode == 0 {
			h.deleteShareOffsets(ctx, r.GroupID, resp)
		}
		resp.Topics = append(resp.Topics, denied...)
		return resp
	})
}

// deleteShareOffsets deletes the state of every partition of the accepted
// topics; a topic whose deletion fails gets its error.
func (h *Handler) deleteShareOffsets(ctx context.Context, groupID string, resp *kmsg.DeleteShareGroupOffsetsResponse) {
	img := h.opts.Meta.Image()
	persister := sharePersister{h}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		meta := img.TopicsByID[base.TopicID(t.TopicID)]
		if t.ErrorCode != 0 || meta == nil {
			continue
		}
		for p := range meta.Partitions {
			if err := persister.delete(ctx, leader.Key{Group: groupID, Topic: meta.ID, Partition: int32(p)}); err != nil {
				t.ErrorCode = shareErrorCode(err)
				t.ErrorMessage = kmsg.StringPtr(err.Error())
				break
			}
		}
	}
	h.shares.DropGroup(groupID)
}
