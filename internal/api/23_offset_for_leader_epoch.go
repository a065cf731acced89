package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
)

// OffsetForLeaderEpoch: v0-4. For each partition, the end offset of the
// largest epoch at or below the one asked for (KIP-101/279/320), from its
// leader only, whoever asks (Kafka's lastOffsetForLeaderEpoch with
// fetchOnlyFromLeader). As in Kafka's KafkaApis, CLUSTER_ACTION on the
// cluster (what followers have) allows every topic; without it each topic
// needs DESCRIBE (what consumers have, KIP-320), else
// TOPIC_AUTHORIZATION_FAILED, whatever the replica id.
func init() { register(23, 0, 4, (*Handler).handleOffsetForLeaderEpoch) }

func (h *Handler) handleOffsetForLeaderEpoch(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	img := h.opts.Meta.Image()
	cluster := h.allowedCluster(req, acl.OpClusterAction)
	for _, rt := range r.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		denied := !cluster && !h.allowedTopic(req, acl.OpDescribe, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			p, code := h.fetchPartition(img.Topics[rt.Topic], rp.Partition, false)
			if denied {
				code = topicDenied
			} else if code == 0 {
				code = checkLeaderEpoch(rp.CurrentLeaderEpoch, p.Offsets().LeaderEpoch)
			}
			if code == 0 {
				if epoch, end, ok := p.EndOffsetForEpoch(base.Epoch(rp.LeaderEpoch)); ok {
					sp.LeaderEpoch, sp.EndOffset = int32(epoch), int64(end)
				}
			}
			sp.ErrorCode = code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return done(resp)
}
