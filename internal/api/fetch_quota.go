package api

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/quota"
)

// consumerQuota resolves the consumer_byte_rate that applies to req's
// client; limited is false when none does. A limited fetch asks for at
// most what the quota lets through in one go (Kafka caps a fetch's
// max_bytes at the quota's window): a larger answer could never be
// served.
func (h *Handler) consumerQuota(req *Request, r *kmsg.FetchRequest) (cq quota.Applied, limited bool) {
	img := h.opts.Meta.Image()
	if !img.HasClientQuotas() {
		return quota.Applied{}, false
	}
	cq, limited = quota.Resolve(img.ClientQuotas, quotaClientOf(req), quota.ConsumerByteRate)
	if !limited {
		return cq, false
	}
	window := max(h.quotas.WindowBytes(cq.Bound), 1)
	if r.MaxBytes <= 0 || int64(r.MaxBytes) > window {
		r.MaxBytes = int32(min(window, 1<<31-1))
	}
	r.MinBytes = min(r.MinBytes, r.MaxBytes)
	return cq, true
}

// finishConsumerFetch settles a consumer's fetch: with its session as
// finishFetch does, or, when the got bytes would put a limited client
// over its consumer_byte_rate, as Kafka answers a throttled fetch:
// nothing read (the bytes are not counted), throttle_time_ms set, and no
// change to the session but its epoch, which the request already moved
// (a full fetch opens none).
func (h *Handler) finishConsumerFetch(fc fetchContext, resp *kmsg.FetchResponse, bufs *fetchBuffers, cq quota.Applied, limited bool, got int) {
	if !limited {
		h.finishFetch(fc, resp, bufs)
		return
	}
	d := h.quotas.Take(quota.ConsumerByteRate, cq, int64(got), time.Now())
	if d == 0 {
		h.finishFetch(fc, resp, bufs)
		return
	}
	bufs.reset()
	resp.Topics = nil
	resp.ThrottleMillis = throttleMillis(d)
	resp.SessionID = 0
	if fc.kind == sessionIncremental {
		resp.SessionID = fc.session.id
	}
}
