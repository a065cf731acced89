package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
)

// OffsetForLeaderEpoch: v0-4. For each partition, the end offset of the
// largest epoch at or below the one asked for (KIP-101/279/320). A
// consumer needs DESCRIBE on the topic, a follower (replica id ≥ 0)
// CLUSTER_ACTION on the cluster, as in Kafka.
func init() { register(23, 0, 4, (*Handler).handleOffsetForLeaderEpoch) }

func (h *Handler) handleOffsetForLeaderEpoch(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	img := h.opts.Meta.Image()
	for _, rt := range r.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		denied, deniedCode := !h.allowedTopic(req, acl.OpDescribe, rt.Topic), topicDenied
		if r.ReplicaID >= 0 { // a follower's request
			denied, deniedCode = !h.allowedCluster(req, acl.OpClusterAction), clusterDenied
		}
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			p, code := h.fetchPartition(img.Topics[rt.Topic], rp.Partition, false)
			if denied {
				code = deniedCode
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
