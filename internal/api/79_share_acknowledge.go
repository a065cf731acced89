package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/share"
)

// ShareAcknowledge (KIP-932): a share group member acknowledges records it
// acquired, without fetching. Versions 1-2 (v2: renewals, KIP-1222, and
// the lock timeout in the response). It cannot open a share session
// (epoch 0 is INVALID_SHARE_SESSION_EPOCH); epoch -1 acknowledges, then
// closes the session and releases the member's records. Each partition's
// ErrorCode is its acknowledgement's, answered once durable. As Kafka:
// READ on the group and each topic; a member id is 1 to 36 characters.
func init() { register(79, 1, 2, (*Handler).handleShareAcknowledge) }

func (h *Handler) handleShareAcknowledge(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ShareAcknowledgeRequest)
	resp := r.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	group, member := deref(r.GroupID), deref(r.MemberID)
	switch {
	case !shareGroupsOn(h.opts.Meta.Image()):
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return done(resp)
	case !h.allowedGroup(req, acl.OpRead, group):
		resp.ErrorCode = groupDenied
		return done(resp)
	case member == "" || len(member) > maxShareMemberIDBytes:
		resp.ErrorCode = kerr.InvalidRequest.Code
		return done(resp)
	}
	key := shareSessionKey{group, member}
	use, code := h.shareSessions.acknowledge(key, r.ShareSessionEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return done(resp)
	}
	set := h.shareSettingsOf(h.opts.Meta.Image(), group)
	if req.Version >= 2 {
		resp.AcquisitionLockTimeoutMillis = int32(set.leader.Limits.LockDuration.Milliseconds())
	}
	maxType := maxAckType(req.Version, r.IsRenewAck)
	// Acknowledgements wait for the share coordinator's writes: they are
	// answered in Wait, not on the connection's reading path.
	return Reply{Wait: func() kmsg.Response {
		h.acknowledgeAll(ctx, req, r, resp, group, member, maxType, set)
		h.hintShareAcknowledgeLeaders(resp, req.Listener)
		if use.closes {
			h.shares.ReleaseMember(context.WithoutCancel(ctx), group, member)
		}
		return resp
	}}
}

// acknowledgeAll applies every partition's acknowledgements into resp.
func (h *Handler) acknowledgeAll(ctx context.Context, req *Request, r *kmsg.ShareAcknowledgeRequest, resp *kmsg.ShareAcknowledgeResponse,
	group, member string, maxType share.AckType, set shareSettings) {
	for _, t := range r.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			pk := sharePartitionKey{topicID: t.TopicID, partition: p.Partition}
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			rp.ErrorCode = h.acknowledgeShare(ctx, req, group, member, pk, shareAcknowledgeAcks(p.AcknowledgementBatches), maxType, set)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
}

func shareAcknowledgeAcks(batches []kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) []wireAck {
	out := make([]wireAck, len(batches))
	for i, b := range batches {
		out[i] = wireAck{first: b.FirstOffset, last: b.LastOffset, types: b.AcknowledgeTypes}
	}
	return out
}
