package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/base"
)

// DeleteRecords: v0-2. Moves the log start forward; -1 means the high
// watermark. Whole segments below the new start are deleted. Needs DELETE
// on the topic.
func init() { register(21, 0, 2, (*Handler).handleDeleteRecords) }

func (h *Handler) handleDeleteRecords(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DeleteRecordsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	img := h.opts.Meta.Image()
	for _, rt := range r.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		denied := !h.allowedTopic(req, acl.OpDelete, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			p, code := h.fetchPartition(img.Topics[rt.Topic], rp.Partition, false)
			if denied {
				code = topicDenied
			} else if code == 0 {
				before := base.Offset(rp.Offset)
				if rp.Offset == -1 {
					before = p.Offsets().HighWatermark
				}
				start, err := p.DeleteRecords(before)
				sp.LowWatermark = int64(start)
				code, _ = errorCode(err)
			}
			sp.ErrorCode = code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return done(resp)
}
