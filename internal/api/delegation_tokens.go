package api

import (
	"crypto/hmac"
	"errors"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
)

// Delegation tokens (KIP-48): CreateDelegationToken, RenewDelegationToken,
// ExpireDelegationToken and DescribeDelegationToken. The tokens live in
// the metadata quorum; their HMACs are never stored: every broker derives
// them from delegation.token.secret.key (sasl.TokenHMAC).

// tokenRequestAllowed is Kafka's allowTokenRequests: a token request must
// come from an authenticated client that did not authenticate with a
// token. PLAINTEXT and one-way TLS (User:ANONYMOUS) are refused, SASL
// sessions authenticated with a delegation token too.
func tokenRequestAllowed(req *Request) bool {
	if req.SASL != nil {
		return req.SASL.Authenticated() && !req.SASL.TokenAuthenticated()
	}
	return req.Principal != "" && req.Principal != acl.Anonymous
}

// tokenGate is the refusal every token request meets before anything
// else, in Kafka's order: not allowed on this connection, then tokens off.
// 0 lets the request through.
func (h *Handler) tokenGate(req *Request) int16 {
	switch {
	case !tokenRequestAllowed(req):
		return kerr.DelegationTokenRequestNotAllowed.Code
	case !h.opts.Config.DelegationTokens.Enabled():
		return kerr.DelegationTokenAuthDisabled.Code
	}
	return 0
}

// tokenByHMAC finds the token whose HMAC is mac, comparing in constant
// time.
func (h *Handler) tokenByHMAC(mac []byte) (metadata.DelegationToken, bool) {
	secret := h.opts.Config.DelegationTokens.SecretKey
	for _, t := range h.opts.Meta.Image().DelegationTokens() {
		if hmac.Equal(sasl.TokenHMAC(secret, t.ID), mac) {
			return t, true
		}
	}
	return metadata.DelegationToken{}, false
}

// changeToken is Renew- and ExpireDelegationToken: past the gate, the
// token named by mac changes through the quorum (change answers its new
// expiry). It answers the error code and the expiry.
func (h *Handler) changeToken(req *Request, mac []byte, change func(id string, nowMs int64) (int64, error)) (int16, int64) {
	if code := h.tokenGate(req); code != 0 {
		return code, 0
	}
	tok, ok := h.tokenByHMAC(mac)
	if !ok {
		return kerr.DelegationTokenNotFound.Code, 0
	}
	expiry, err := change(tok.ID, time.Now().UnixMilli())
	if err != nil {
		return tokenErrorCode(err), 0
	}
	return 0, expiry
}

// splitPrincipal splits "Type:name" into its type and name.
func splitPrincipal(p string) (kind, name string) {
	kind, name, _ = strings.Cut(p, ":")
	return kind, name
}

// tokenLifetime is the life a request asks for, bounded by the broker's:
// the broker's when the request asks for none (0 or less).
func tokenLifetime(requestedMs int64, broker time.Duration) int64 {
	ms := broker.Milliseconds()
	if requestedMs > 0 {
		return min(ms, requestedMs)
	}
	return ms
}

// tokenErrorCode maps the quorum's refusal of a token change.
func tokenErrorCode(err error) int16 {
	switch {
	case errors.Is(err, metadata.ErrDelegationTokenNotFound):
		return kerr.DelegationTokenNotFound.Code
	case errors.Is(err, metadata.ErrDelegationTokenExpired):
		return kerr.DelegationTokenExpired.Code
	case errors.Is(err, metadata.ErrDelegationTokenOwnership):
		return kerr.DelegationTokenOwnerMismatch.Code
	case errors.Is(err, metadata.ErrInvalidPrincipalType):
		return kerr.InvalidPrincipalType.Code
	case errors.Is(err, metadata.ErrInvalidDelegationToken):
		return kerr.InvalidRequest.Code
	}
	code, _ := controllerAnswerCode(err)
	return code
}
