package api

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/quota"
)

// maxThrottleMillis bounds a throttle_time_ms (the field is an int32).
const maxThrottleMillis = 1<<31 - 1

// quotaClientOf is who req counts against: its principal's name (Kafka's
// quota user: "alice" for User:alice, ANONYMOUS without authentication)
// and its client id.
func quotaClientOf(req *Request) quota.Client {
	c := quota.Client{User: req.Principal}
	if _, name, ok := strings.Cut(req.Principal, ":"); ok {
		c.User = name
	}
	if req.ClientID != nil {
		c.ClientID = *req.ClientID
	}
	return c
}

// quotaThrottle counts n bytes against the quota on key that applies to
// req's client, if any, and returns how long the client must now wait: 0
// within its quota or without one. A throttle is enforced by the server
// from the response's throttle_time_ms (or Reply.Mute), as Kafka does; the
// bytes are served either way, and the client's average keeps to its
// quota over the meter's window.
func (h *Handler) quotaThrottle(req *Request, key string, n int64) time.Duration {
	img := h.opts.Meta.Image()
	if !img.HasClientQuotas() {
		return 0
	}
	a, ok := quota.Resolve(img.ClientQuotas, quotaClientOf(req), key)
	if !ok {
		return 0
	}
	return h.quotas.Record(key, a, n, time.Now())
}

// QuotaThrottles is what each quota key has throttled since the Handler
// began (for the metrics).
func (h *Handler) QuotaThrottles() []quota.KeyStats { return h.quotas.Stats() }

// throttleMillis is d as a throttle_time_ms.
func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), maxThrottleMillis))
}

// produceBytes is what a produce request counts against producer_byte_rate:
// the bytes of its record batches.
func produceBytes(r *kmsg.ProduceRequest) int64 {
	var n int64
	for i := range r.Topics {
		for j := range r.Topics[i].Partitions {
			n += int64(len(r.Topics[i].Partitions[j].Records))
		}
	}
	return n
}
