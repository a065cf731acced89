package api

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/quota"
)

// mutationQuota is one CreateTopics, CreatePartitions or DeleteTopics
// request's controller_mutation_rate (KIP-599): each topic's partitions
// are taken from the client's token bucket as the topic is created,
// extended or deleted. From the version that can say
// THROTTLING_QUOTA_EXCEEDED (strict) a topic is refused while the bucket
// is in debt; before it, every topic goes through and the response is
// throttled for the debt. A nil *mutationQuota limits nothing (a topic
// the broker creates itself, as Kafka's auto-creation).
type mutationQuota struct {
	h        *Handler
	applied  quota.Applied
	strict   bool
	throttle time.Duration // the longest throttle a topic of the request earned
}

// newMutationQuota is the quota of req's client, strict from version
// strictSince; nil when no controller_mutation_rate applies to it.
func (h *Handler) newMutationQuota(req *Request, strictSince int16) *mutationQuota {
	img := h.opts.Meta.Image()
	if !img.HasClientQuotas() {
		return nil
	}
	a, ok := quota.Resolve(img.ClientQuotas, quotaClientOf(req), quota.ControllerMutationRate)
	if !ok {
		return nil
	}
	return &mutationQuota{h: h, applied: a, strict: req.Version >= strictSince}
}

// take asks for the partitions one topic creates or deletes; a non-zero
// code refuses the topic.
func (q *mutationQuota) take(partitions int32) (int16, string) {
	if q == nil {
		return 0, ""
	}
	v := q.h.quotas.Mutate(q.applied, float64(partitions), q.strict, time.Now())
	q.throttle = max(q.throttle, v.Throttle)
	if !v.Accepted {
		return kerr.ThrottlingQuotaExceeded.Code, fmt.Sprintf(
			"the throttling quota has been exceeded: %s %g partitions per second (set on %s); retry after %v",
			quota.ControllerMutationRate, q.applied.Bound, q.applied.From, v.Throttle.Round(time.Millisecond))
	}
	return 0, ""
}

// throttleMillis is the request's throttle_time_ms.
func (q *mutationQuota) throttleMillis() int32 {
	if q == nil {
		return 0
	}
	return throttleMillis(q.throttle)
}
