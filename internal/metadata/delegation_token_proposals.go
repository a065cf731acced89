package metadata

import (
	"context"
	"fmt"
)

// CreateDelegationToken stores t (Kafka's CreateDelegationToken, once the
// caller has drawn its id and HMAC and resolved its times). Its renewers
// are sorted and deduplicated first, in a copy: the caller's slice stays
// the caller's. It is refused with ErrInvalidDelegationToken or
// ErrInvalidPrincipalType (a renewer that is not a User) before anything
// is proposed, and with ErrDelegationTokenExists when t.ID is in use.
// After an unknown outcome (ctx ended) a retry may find its own token
// stored (ErrDelegationTokenExists).
func (s *Store) CreateDelegationToken(ctx context.Context, t DelegationToken) error {
	t.Renewers = canonicalRenewers(t.Renewers)
	cmd := &createDelegationTokenCmd{Token: toWireDelegationToken(t)}
	// What apply refuses whatever the image is never takes a log entry.
	if err := validateCreateDelegationToken(cmd); err != nil {
		return err
	}
	_, err := s.propose(ctx, cmd)
	return err
}

// RenewDelegationToken renews token id for principal at nowMs by renewMs
// > 0 (the caller resolves Kafka's -1, the broker's default) and returns
// the token's new expiry: nowMs+renewMs, no later than its MaxMs (and no
// earlier than its IssueMs). It is refused with ErrInvalidDelegationToken
// (a bad id or principal, a negative time, a period that is not positive)
// before anything is proposed, then, in this order, with
// ErrDelegationTokenNotFound, ErrDelegationTokenExpired (at nowMs) and
// ErrDelegationTokenOwnership (principal is neither the owner nor a
// renewer). Renewing again after an unknown outcome is harmless.
func (s *Store) RenewDelegationToken(ctx context.Context, id, principal string, nowMs, renewMs int64) (expiryMs int64, err error) {
	cmd := &renewDelegationTokenCmd{ID: id, Principal: principal, NowMs: nowMs, RenewMs: renewMs}
	if err := validateRenewDelegationToken(cmd); err != nil {
		return 0, err
	}
	img, err := s.propose(ctx, cmd)
	if err != nil {
		return 0, err
	}
	return changedExpiry(img, id, "renewed")
}

// ExpireDelegationToken expires token id for principal at nowMs (Kafka's
// ExpireDelegationToken): with periodMs < 0 at once, removing the token
// and returning nowMs; otherwise it moves the expiry to nowMs+periodMs, no
// later than its MaxMs (and no earlier than its IssueMs), and returns it.
// It is refused as RenewDelegationToken is, but accepts any period.
func (s *Store) ExpireDelegationToken(ctx context.Context, id, principal string, nowMs, periodMs int64) (expiryMs int64, err error) {
	cmd := &expireDelegationTokenCmd{ID: id, Principal: principal, NowMs: nowMs, PeriodMs: periodMs}
	if err := validateExpireDelegationToken(cmd); err != nil {
		return 0, err
	}
	img, err := s.propose(ctx, cmd)
	if err != nil {
		return 0, err
	}
	if periodMs < 0 {
		return nowMs, nil
	}
	return changedExpiry(img, id, "expired")
}

// changedExpiry is the expiry of token id in img, the image a renew or
// expire of it produced. Only on a follower, whose image may already
// hold later changes, can the token be gone.
func changedExpiry(img *Image, id, verb string) (int64, error) {
	t, ok := img.DelegationToken(id)
	if !ok {
		return 0, fmt.Errorf("%w: %q was removed right after it was %s", ErrDelegationTokenNotFound, id, verb)
	}
	return t.ExpiryMs, nil
}

// RemoveExpiredDelegationTokens removes every token expired at nowMs
// (DelegationToken.ExpiredAt), as Kafka's controller does periodically,
// and returns how many it removed. It proposes nothing, and returns 0,
// when this node's image holds no such token. The count is of the tokens
// expired in this node's image before the proposal that the resulting
// image no longer holds: exactly what the command removed, unless
// another change removed or created expired tokens meanwhile. It is
// refused with ErrInvalidDelegationToken for a negative nowMs.
func (s *Store) RemoveExpiredDelegationTokens(ctx context.Context, nowMs int64) (removed int, err error) {
	cmd := &removeExpiredDelegationTokensCmd{NowMs: nowMs}
	if err := validateRemoveExpiredDelegationTokens(cmd); err != nil {
		return 0, err
	}
	expired := expiredDelegationTokens(s.Image(), nowMs)
	if len(expired) == 0 {
		return 0, nil
	}
	img, err := s.propose(ctx, cmd)
	if err != nil {
		return 0, err
	}
	for _, id := range expired {
		if _, ok := img.delegationTokens[id]; !ok {
			removed++
		}
	}
	return removed, nil
}

// expiredDelegationTokens returns the ids of img's tokens expired at
// nowMs, in no order.
func expiredDelegationTokens(img *Image, nowMs int64) []string {
	var out []string
	for id, t := range img.delegationTokens {
		if t.ExpiredAt(nowMs) {
			out = append(out, id)
		}
	}
	return out
}
