package api

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
)

// CreateDelegationToken: v0-v3 (KIP-48; v3 creates a token for another
// owner, KIP-373). The token lives delegation.token.expiry.time.ms unless
// renewed, and never past delegation.token.max.lifetime.ms (or the shorter
// max_lifetime_ms asked for). Refused, in Kafka's order: on a connection
// that may not ask (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), for another
// owner without CREATE_TOKENS on that User
// (DELEGATION_TOKEN_AUTHORIZATION_FAILED), with a renewer that is not a
// User (INVALID_PRINCIPAL_TYPE), with tokens off
// (DELEGATION_TOKEN_AUTH_DISABLED).
func init() { register(38, 0, 3, (*Handler).handleCreateDelegationToken) }

func (h *Handler) handleCreateDelegationToken(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.CreateDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	requester := req.Principal
	owner := requester
	if r.OwnerPrincipalName != nil && *r.OwnerPrincipalName != "" {
		kind := metadata.PrincipalTypeUser
		if r.OwnerPrincipalType != nil {
			kind = *r.OwnerPrincipalType
		}
		owner = kind + ":" + *r.OwnerPrincipalName
	}
	resp.PrincipalType, resp.PrincipalName = splitPrincipal(owner)
	resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = splitPrincipal(requester)
	renewers := make([]string, 0, len(r.Renewers))
	renewersUsers := true
	for _, rn := range r.Renewers {
		renewers = append(renewers, rn.PrincipalType+":"+rn.PrincipalName)
		renewersUsers = renewersUsers && rn.PrincipalType == metadata.PrincipalTypeUser
	}
	switch {
	case !tokenRequestAllowed(req):
		resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
	case owner != requester && !h.allowed(req, acl.OpCreateTokens, acl.ResourceUser, owner):
		resp.ErrorCode = kerr.DelegationTokenAuthorizationFailed.Code
	case !renewersUsers:
		resp.ErrorCode = kerr.InvalidPrincipalType.Code
	default:
		resp.ErrorCode = h.tokenGate(req)
	}
	if resp.ErrorCode != 0 {
		return done(resp)
	}
	cfg := h.opts.Config.DelegationTokens
	now := time.Now().UnixMilli()
	maxMs := now + tokenLifetime(r.MaxLifetimeMillis, cfg.MaxLifetime)
	tok := metadata.DelegationToken{
		ID: metadata.NewDelegationTokenID(), Owner: owner, Requester: requester, Renewers: renewers,
		IssueMs: now, MaxMs: maxMs, ExpiryMs: min(maxMs, now+cfg.ExpiryTime.Milliseconds()),
	}
	if err := h.opts.Meta.CreateDelegationToken(ctx, tok); err != nil {
		resp.ErrorCode = tokenErrorCode(err)
		return done(resp)
	}
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = tok.IssueMs, tok.ExpiryMs, tok.MaxMs
	resp.TokenID = tok.ID
	resp.HMAC = sasl.TokenHMAC(cfg.SecretKey, tok.ID)
	return done(resp)
}
