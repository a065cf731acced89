package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RenewDelegationToken: v0-v2 (KIP-48). The token named by its HMAC lives
// on for delegation.token.expiry.time.ms (or the shorter renew period
// asked for) from now, never past its max timestamp. Only its owner and
// its renewers may renew it (DELEGATION_TOKEN_OWNER_MISMATCH); an unknown
// HMAC is DELEGATION_TOKEN_NOT_FOUND, an expired token
// DELEGATION_TOKEN_EXPIRED.
func init() { register(39, 0, 2, (*Handler).handleRenewDelegationToken) }

func (h *Handler) handleRenewDelegationToken(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.RenewDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
	renewMs := tokenLifetime(r.RenewTimeMillis, h.opts.Config.DelegationTokens.ExpiryTime)
	resp.ErrorCode, resp.ExpiryTimestamp = h.changeToken(req, r.HMAC, func(id string, nowMs int64) (int64, error) {
		return h.opts.Meta.RenewDelegationToken(ctx, id, req.Principal, nowMs, renewMs)
	})
	return done(resp)
}
