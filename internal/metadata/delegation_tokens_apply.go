package metadata

import (
	"fmt"
	"math"
)

// validateCreateDelegationToken is every check of a
// createDelegationTokenCmd that does not depend on the image; the Store
// runs it before proposing too.
func validateCreateDelegationToken(c *createDelegationTokenCmd) error {
	return validateDelegationToken(c.Token.token())
}

// validateTokenChange checks what a renew or expire command says of
// itself: a valid token id and principal, a time that is not negative.
func validateTokenChange(id, principal string, nowMs int64) error {
	if err := validateDelegationTokenID(id); err != nil {
		return err
	}
	if err := validatePrincipal("requesting", principal); err != nil {
		return fmt.Errorf("token %q: %w", id, err)
	}
	if nowMs < 0 {
		return fmt.Errorf("%w: token %q: time %d ms, want ≥ 0", ErrInvalidDelegationToken, id, nowMs)
	}
	return nil
}

// validateRenewDelegationToken is every check of a renewDelegationTokenCmd
// that does not depend on the image.
func validateRenewDelegationToken(c *renewDelegationTokenCmd) error {
	if err := validateTokenChange(c.ID, c.Principal, c.NowMs); err != nil {
		return err
	}
	if c.RenewMs <= 0 {
		return fmt.Errorf("%w: token %q: renew period %d ms, want > 0", ErrInvalidDelegationToken, c.ID, c.RenewMs)
	}
	return nil
}

// validateExpireDelegationToken is every check of an
// expireDelegationTokenCmd that does not depend on the image.
func validateExpireDelegationToken(c *expireDelegationTokenCmd) error {
	return validateTokenChange(c.ID, c.Principal, c.NowMs)
}

// validateRemoveExpiredDelegationTokens is every check of a
// removeExpiredDelegationTokensCmd that does not depend on the image.
func validateRemoveExpiredDelegationTokens(c *removeExpiredDelegationTokensCmd) error {
	if c.NowMs < 0 {
		return fmt.Errorf("%w: time %d ms, want ≥ 0", ErrInvalidDelegationToken, c.NowMs)
	}
	return nil
}

// applyCreateDelegationToken stores a new token; an id in use is refused,
// whether or not that token has expired.
func applyCreateDelegationToken(img *Image, c *createDelegationTokenCmd, index uint64) (*Image, error) {
	if err := validateCreateDelegationToken(c); err != nil {
		return nil, err
	}
	t := c.Token.token() // a copy: the command's slice is not the image's
	if _, ok := img.delegationTokens[t.ID]; ok {
		return nil, fmt.Errorf("%w: %q", ErrDelegationTokenExists, t.ID)
	}
	return img.withDelegationToken(t, index), nil
}

// changeableToken finds token id for a renew or expire by principal at
// nowMs, with Kafka's checks in Kafka's order: unknown, expired, then not
// the owner's nor a renewer's.
func changeableToken(img *Image, id, principal string, nowMs int64) (DelegationToken, error) {
	t, ok := img.delegationTokens[id]
	switch {
	case !ok:
		return DelegationToken{}, fmt.Errorf("%w: %q", ErrDelegationTokenNotFound, id)
	case t.ExpiredAt(nowMs):
		return DelegationToken{}, fmt.Errorf("%w: %q expired at %d ms (max %d ms), now %d ms",
			ErrDelegationTokenExpired, id, t.ExpiryMs, t.MaxMs, nowMs)
	case !t.MayRenew(principal):
		return DelegationToken{}, fmt.Errorf("%w: %s is neither the owner of %q nor a renewer", ErrDelegationTokenOwnership, principal, id)
	}
	return t, nil
}

// applyRenewDelegationToken moves a token's expiry to NowMs+RenewMs, no
// later than its MaxMs (delegationTokenExpiry).
func applyRenewDelegationToken(img *Image, c *renewDelegationTokenCmd, index uint64) (*Image, error) {
	if err := validateRenewDelegationToken(c); err != nil {
		return nil, err
	}
	t, err := changeableToken(img, c.ID, c.Principal, c.NowMs)
	if err != nil {
		return nil, err
	}
	t.ExpiryMs = delegationTokenExpiry(t, c.NowMs, c.RenewMs)
	return img.withDelegationToken(t, index), nil
}

// applyExpireDelegationToken removes a token (PeriodMs < 0) or moves its
// expiry to NowMs+PeriodMs, no later than its MaxMs
// (delegationTokenExpiry), as Kafka's ExpireDelegationToken.
func applyExpireDelegationToken(img *Image, c *expireDelegationTokenCmd, index uint64) (*Image, error) {
	if err := validateExpireDelegationToken(c); err != nil {
		return nil, err
	}
	t, err := changeableToken(img, c.ID, c.Principal, c.NowMs)
	if err != nil {
		return nil, err
	}
	if c.PeriodMs < 0 {
		next := img.with(index)
		next.delegationTokens = copyMap(img.delegationTokens, 0)
		delete(next.delegationTokens, c.ID)
		return next, nil
	}
	t.ExpiryMs = delegationTokenExpiry(t, c.NowMs, c.PeriodMs)
	return img.withDelegationToken(t, index), nil
}

// applyRemoveExpiredDelegationTokens removes every token expired at NowMs
// (DelegationToken.ExpiredAt). Removing none is no change, but a new
// image version all the same, as for any applied command.
func applyRemoveExpiredDelegationTokens(img *Image, c *removeExpiredDelegationTokensCmd, index uint64) (*Image, error) {
	if err := validateRemoveExpiredDelegationTokens(c); err != nil {
		return nil, err
	}
	next := img.with(index)
	var tokens map[string]DelegationToken // nil until a token is removed
	for id, t := range img.delegationTokens {
		if !t.ExpiredAt(c.NowMs) {
			continue
		}
		if tokens == nil {
			tokens = copyMap(img.delegationTokens, 0)
		}
		delete(tokens, id)
	}
	if tokens != nil {
		next.delegationTokens = tokens
	}
	return next, nil
}

// delegationTokenExpiry is t's expiry renewed at nowMs for periodMs ≥ 0:
// nowMs+periodMs (saturating, not wrapping, past math.MaxInt64) but no
// later than t.MaxMs, as Kafka's. It is never before t.IssueMs either,
// which keeps the invariant IssueMs ≤ ExpiryMs: nowMs is the proposer's
// clock, and the token may have been issued by a controller whose clock
// was ahead.
func delegationTokenExpiry(t DelegationToken, nowMs, periodMs int64) int64 {
	return max(t.IssueMs, min(t.MaxMs, saturatingAdd(nowMs, periodMs)))
}

// saturatingAdd is a+b for b ≥ 0, or math.MaxInt64 where that overflows.
func saturatingAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// withDelegationToken returns a copy of img with t added or replaced (by
// id), copying the token map.
func (img *Image) withDelegationToken(t DelegationToken, version uint64) *Image {
	next := img.with(version)
	next.delegationTokens = copyMap(img.delegationTokens, 1)
	next.delegationTokens[t.ID] = t
	return next
}
