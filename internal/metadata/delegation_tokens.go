package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// PrincipalTypeUser is the principal type of a user ("User:alice"), the
// only type a delegation token's renewer may have (Kafka's
// KafkaPrincipal.USER_TYPE).
const PrincipalTypeUser = "User"

// Limits on a stored delegation token.
const (
	// maxDelegationTokenIDBytes bounds a token id; Kafka's are UUID
	// strings of 36 bytes.
	maxDelegationTokenIDBytes = 256
	// maxPrincipalBytes bounds an owner's, requester's or renewer's
	// principal string.
	maxPrincipalBytes = 1024
	// maxDelegationTokenRenewers bounds one token's renewers, and so its
	// share of a command and of the image.
	maxDelegationTokenRenewers = 1024
)

// DelegationToken is one delegation token's information (KIP-48; Kafka's
// TokenInformation): never its HMAC, which brokers derive from
// delegation.token.secret.key.
//
// Invariants (in an Image, and in a create command): ID is 1 to
// maxDelegationTokenIDBytes bytes of UTF-8; Owner, Requester and every
// renewer are valid principals (validatePrincipal); every renewer's type
// is PrincipalTypeUser; Renewers are ascending, without duplicates, at
// most maxDelegationTokenRenewers, and nil when there is none; 0 ≤
// IssueMs ≤ ExpiryMs ≤ MaxMs.
type DelegationToken struct {
	// ID is the token id (Kafka: a UUID string).
	ID string
	// Owner is the principal the token authenticates as, "Type:name"
	// (e.g. "User:alice").
	Owner string
	// Requester is the principal that created the token, "Type:name".
	Requester string
	// Renewers are the principals besides Owner that may renew or expire
	// the token, each "User:name".
	Renewers []string
	// IssueMs is when the token was created, in ms since the epoch.
	IssueMs int64
	// MaxMs is the time past which the token cannot be renewed.
	MaxMs int64
	// ExpiryMs is the token's current expiry.
	ExpiryMs int64
}

// OwnerOrRenewer reports whether principal is the token's owner, its
// requester or one of its renewers: whether it may describe the token
// (Kafka's TokenInformation.ownerOrRenewer).
func (t DelegationToken) OwnerOrRenewer(principal string) bool {
	return t.Owner == principal || t.Requester == principal || t.MayRenew(principal)
}

// MayRenew reports whether principal is the token's owner or one of its
// renewers: whether it may renew or expire the token (Kafka's controller,
// allowedToRenew). The requester alone may not.
func (t DelegationToken) MayRenew(principal string) bool {
	return t.Owner == principal || slices.Contains(t.Renewers, principal)
}

// ExpiredAt reports whether the token has expired at nowMs: past its
// expiry or its maximum lifetime (Kafka's check, which a token past
// either can no longer be renewed from).
func (t DelegationToken) ExpiredAt(nowMs int64) bool {
	return t.MaxMs < nowMs || t.ExpiryMs < nowMs
}

// clone returns a copy of t that shares no slice with it.
func (t DelegationToken) clone() DelegationToken {
	t.Renewers = slices.Clone(t.Renewers)
	return t
}

// DelegationTokens returns every stored token, ascending by ID; nil when
// there is none. The tokens are copies: the caller's to change.
func (img *Image) DelegationTokens() []DelegationToken {
	var out []DelegationToken
	for _, id := range slices.Sorted(maps.Keys(img.delegationTokens)) {
		out = append(out, img.delegationTokens[id].clone())
	}
	return out
}

// DelegationToken returns the token with id, a copy.
func (img *Image) DelegationToken(id string) (DelegationToken, bool) {
	t, ok := img.delegationTokens[id]
	if !ok {
		return DelegationToken{}, false
	}
	return t.clone(), true
}

// validatePrincipal checks that p is "Type:name" with a non-empty type
// and name (the name may hold colons, as Kafka's does), at most
// maxPrincipalBytes of UTF-8. role names p in the error.
func validatePrincipal(role, p string) error {
	typ, name, ok := strings.Cut(p, ":")
	switch {
	case len(p) > maxPrincipalBytes:
		return fmt.Errorf("%w: %s principal of %d bytes, at most %d", ErrInvalidDelegationToken, role, len(p), maxPrincipalBytes)
	case !utf8.ValidString(p):
		// JSON would replace the bad bytes: the log would name another principal.
		return fmt.Errorf("%w: %s principal %q is not UTF-8", ErrInvalidDelegationToken, role, p)
	case !ok || typ == "" || name == "":
		return fmt.Errorf("%w: %s principal %q, want Type:name", ErrInvalidDelegationToken, role, p)
	}
	return nil
}

// validateDelegationTokenID checks that id is 1 to
// maxDelegationTokenIDBytes bytes of UTF-8.
func validateDelegationTokenID(id string) error {
	switch {
	case id == "" || len(id) > maxDelegationTokenIDBytes:
		return fmt.Errorf("%w: token id of %d bytes, want 1..%d", ErrInvalidDelegationToken, len(id), maxDelegationTokenIDBytes)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: token id %q is not UTF-8", ErrInvalidDelegationToken, id)
	}
	return nil
}

// validateRenewers checks the renewers of token id: valid principals of
// PrincipalTypeUser (ErrInvalidPrincipalType otherwise), ascending, none
// twice, at most maxDelegationTokenRenewers.
func validateRenewers(id string, renewers []string) error {
	if len(renewers) > maxDelegationTokenRenewers {
		return fmt.Errorf("%w: token %q has %d renewers, at most %d", ErrInvalidDelegationToken, id, len(renewers), maxDelegationTokenRenewers)
	}
	for i, r := range renewers {
		if err := validatePrincipal("renewer", r); err != nil {
			return fmt.Errorf("token %q: %w", id, err)
		}
		if typ, _, _ := strings.Cut(r, ":"); typ != PrincipalTypeUser {
			return fmt.Errorf("%w: token %q: renewer %q is of type %q, want %s", ErrInvalidPrincipalType, id, r, typ, PrincipalTypeUser)
		}
		if i > 0 && renewers[i-1] >= r {
			// One spelling per set: the same token would be two log entries.
			return fmt.Errorf("%w: token %q: renewers %q not ascending without duplicates", ErrInvalidDelegationToken, id, renewers)
		}
	}
	return nil
}

// validateDelegationToken checks t against every invariant of
// DelegationToken: what a create command and a snapshot must hold.
func validateDelegationToken(t DelegationToken) error {
	if err := validateDelegationTokenID(t.ID); err != nil {
		return err
	}
	if err := validatePrincipal("owner", t.Owner); err != nil {
		return fmt.Errorf("token %q: %w", t.ID, err)
	}
	if err := validatePrincipal("requester", t.Requester); err != nil {
		return fmt.Errorf("token %q: %w", t.ID, err)
	}
	if err := validateRenewers(t.ID, t.Renewers); err != nil {
		return err
	}
	if t.IssueMs < 0 || t.IssueMs > t.ExpiryMs || t.ExpiryMs > t.MaxMs {
		return fmt.Errorf("%w: token %q: issued %d, expiry %d, max %d, want 0 ≤ issue ≤ expiry ≤ max",
			ErrInvalidDelegationToken, t.ID, t.IssueMs, t.ExpiryMs, t.MaxMs)
	}
	return nil
}

// canonicalRenewers returns renewers ascending without duplicates, a
// fresh slice; nil when there is none.
func canonicalRenewers(renewers []string) []string {
	if len(renewers) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(renewers)))
}
