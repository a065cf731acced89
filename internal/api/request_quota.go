package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/quota"
)

// requestQuotaExempt are the API keys whose time counts against no
// request_percentage, as in Kafka: a client must always be able to learn
// the versions and authenticate, and what brokers send each other (Kafka
// exempts every request of a CLUSTER_ACTION principal) must not be held
// back by a client's quota.
var requestQuotaExempt = map[int16]bool{
	17: true, // SaslHandshake
	18: true, // ApiVersions
	36: true, // SaslAuthenticate
	27: true, // WriteTxnMarkers: between brokers
}

// requestQuota is the request_percentage quota (KIP-124) that applies to
// req, if any: none for an exempt API, a follower's fetch, or a
// transaction verification between brokers (AddPartitionsToTxn v4+).
func (h *Handler) requestQuota(req *Request) (quota.Applied, bool) {
	if requestQuotaExempt[req.Key] {
		return quota.Applied{}, false
	}
	img := h.opts.Meta.Image()
	if !img.HasClientQuotas() {
		return quota.Applied{}, false
	}
	switch r := req.Body.(type) {
	case *kmsg.FetchRequest:
		if _, follower := fetchReplica(r, req.Version); follower {
			return quota.Applied{}, false
		}
	case *kmsg.AddPartitionsToTxnRequest:
		if req.Version >= 4 {
			return quota.Applied{}, false
		}
	}
	return quota.Resolve(img.ClientQuotas, quotaClientOf(req), quota.RequestPercentage)
}

// handleMetered handles req with fn and counts the time it took against
// the client's request_percentage, as Kafka counts its request handler
// threads' time: the handling of the request, not a wait for its
// response (a long poll, a sync). A client over its quota is throttled as
// for the others: its response carries the longer of the two throttles
// (or, for a response without throttle_time_ms, the connection is muted
// for it).
func (h *Handler) handleMetered(ctx context.Context, req *Request, a quota.Applied, fn handleFunc) Reply {
	start := time.Now()
	reply := fn(h, ctx, req)
	now := time.Now()
	d := h.quotas.RecordRequestTime(a, now.Sub(start), now)
	if d <= 0 {
		return reply
	}
	return withThrottle(req, reply, d)
}

// withThrottle makes req's reply throttle its client for at least d:
// through the response's throttle_time_ms, which the server enforces (see
// server.Reply), or, for a response type without one or no response,
// through Reply.Mute.
func withThrottle(req *Request, reply Reply, d time.Duration) Reply {
	switch {
	case reply.Resp != nil:
		if !raiseThrottle(reply.Resp, d) {
			reply.Mute = max(reply.Mute, d)
		}
	case reply.Wait != nil:
		if _, ok := req.Body.ResponseKind().(kmsg.ThrottleResponse); !ok {
			reply.Mute = max(reply.Mute, d)
			break
		}
		wait := reply.Wait
		reply.Wait = func() kmsg.Response {
			resp := wait()
			raiseThrottle(resp, d)
			return resp
		}
	default:
		reply.Mute = max(reply.Mute, d)
	}
	return reply
}

// raiseThrottle sets resp's throttle_time_ms to at least d; false when the
// response has no such field.
func raiseThrottle(resp kmsg.Response, d time.Duration) bool {
	tr, ok := resp.(kmsg.ThrottleResponse)
	if !ok {
		return false
	}
	ms, _ := tr.Throttle()
	if want := throttleMillis(d); want > ms {
		resp.(kmsg.SetThrottleResponse).SetThrottle(want)
	}
	return true
}
