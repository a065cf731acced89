package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ExpireDelegationToken: v0-v2 (KIP-48). A negative period removes the
// token now (the answer's expiry is now; Kafka answers the negative period
// itself); otherwise the token expires that long from now, never past its
// max timestamp. The same refusals as RenewDelegationToken.
func init() { register(40, 0, 2, (*Handler).handleExpireDelegationToken) }

func (h *Handler) handleExpireDelegationToken(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ExpireDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
	resp.ErrorCode, resp.ExpiryTimestamp = h.changeToken(req, r.HMAC, func(id string, nowMs int64) (int64, error) {
		return h.opts.Meta.ExpireDelegationToken(ctx, id, req.Principal, nowMs, r.ExpiryPeriodMillis)
	})
	return done(resp)
}
