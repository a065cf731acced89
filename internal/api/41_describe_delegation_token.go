package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
)

// DescribeDelegationToken: v0-v3 (KIP-48; v3 names each token's
// requester). Null owners asks for every token, an empty list for none.
// A client sees the tokens it owns, requested or may renew, and others
// with DESCRIBE on the token or DESCRIBE_TOKENS on its owner (KIP-373), as
// Kafka's filterToken decides; tokens that expired but are not yet removed
// are listed, as in Kafka.
func init() { register(41, 0, 3, (*Handler).handleDescribeDelegationToken) }

func (h *Handler) handleDescribeDelegationToken(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeDelegationTokenRequest)
	resp := r.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	if resp.ErrorCode = h.tokenGate(req); resp.ErrorCode != 0 || (r.Owners != nil && len(r.Owners) == 0) {
		return done(resp)
	}
	var owners []string
	for _, o := range r.Owners {
		owners = append(owners, o.PrincipalType+":"+o.PrincipalName)
	}
	secret := h.opts.Config.DelegationTokens.SecretKey
	for _, t := range h.opts.Meta.Image().DelegationTokens() {
		if !tokenVisible(t, req.Principal, r.Owners != nil, owners, func() bool {
			return h.allowed(req, acl.OpDescribe, acl.ResourceDelegationToken, t.ID) ||
				h.allowed(req, acl.OpDescribeTokens, acl.ResourceUser, t.Owner)
		}) {
			continue
		}
		resp.TokenDetails = append(resp.TokenDetails, describedToken(t, sasl.TokenHMAC(secret, t.ID)))
	}
	return done(resp)
}

// tokenVisible is Kafka's filterToken: a token none of the asked-for
// owners owns, requested or renews is left out; one the requester owns,
// requested or renews is shown; any other only if authorized says so.
func tokenVisible(t metadata.DelegationToken, requester string, filtered bool, owners []string, authorized func() bool) bool {
	if filtered {
		asked := false
		for _, o := range owners {
			asked = asked || t.OwnerOrRenewer(o)
		}
		if !asked {
			return false
		}
	}
	return t.OwnerOrRenewer(requester) || authorized()
}

func describedToken(t metadata.DelegationToken, mac []byte) kmsg.DescribeDelegationTokenResponseTokenDetail {
	d := kmsg.NewDescribeDelegationTokenResponseTokenDetail()
	d.PrincipalType, d.PrincipalName = splitPrincipal(t.Owner)
	d.TokenRequesterPrincipalType, d.TokenRequesterPrincipalName = splitPrincipal(t.Requester)
	d.IssueTimestamp, d.ExpiryTimestamp, d.MaxTimestamp = t.IssueMs, t.ExpiryMs, t.MaxMs
	d.TokenID, d.HMAC = t.ID, mac
	for _, rn := range t.Renewers {
		w := kmsg.NewDescribeDelegationTokenResponseTokenDetailRenewer()
		w.PrincipalType, w.PrincipalName = splitPrincipal(rn)
		d.Renewers = append(d.Renewers, w)
	}
	return d
}
