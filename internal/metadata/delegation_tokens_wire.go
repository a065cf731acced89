package metadata

import (
	"fmt"
	"slices"
)

// wireDelegationToken is a DelegationToken as commands and snapshots store
// it, with its own tags so that renaming a field of DelegationToken never
// changes what is in a log or a snapshot.
type wireDelegationToken struct {
	ID        string   `json:"id"`
	Owner     string   `json:"owner"`
	Requester string   `json:"requester"`
	Renewers  []string `json:"renewers"`
	IssueMs   int64    `json:"issue_ms"`
	MaxMs     int64    `json:"max_ms"`
	ExpiryMs  int64    `json:"expiry_ms"`
}

func toWireDelegationToken(t DelegationToken) wireDelegationToken {
	return wireDelegationToken{
		ID: t.ID, Owner: t.Owner, Requester: t.Requester, Renewers: slices.Clone(t.Renewers),
		IssueMs: t.IssueMs, MaxMs: t.MaxMs, ExpiryMs: t.ExpiryMs,
	}
}

// token converts w back, copying its renewers (nil when there is none, the
// one spelling the image keeps); validateDelegationToken judges the result.
func (w wireDelegationToken) token() DelegationToken {
	t := DelegationToken{
		ID: w.ID, Owner: w.Owner, Requester: w.Requester, Renewers: slices.Clone(w.Renewers),
		IssueMs: w.IssueMs, MaxMs: w.MaxMs, ExpiryMs: w.ExpiryMs,
	}
	if len(t.Renewers) == 0 {
		t.Renewers = nil
	}
	return t
}

// encodeDelegationTokens returns img's tokens in snapshot order, ascending
// by id; nil when there is none.
func encodeDelegationTokens(img *Image) []wireDelegationToken {
	var out []wireDelegationToken
	for _, t := range img.DelegationTokens() {
		out = append(out, toWireDelegationToken(t))
	}
	return out
}

// restoreDelegationTokens adds a snapshot's tokens to img, checking every
// invariant of Image that concerns them, as a create command would: a
// snapshot is a gateway.
func restoreDelegationTokens(img *Image, tokens []wireDelegationToken) error {
	for _, w := range tokens {
		t := w.token()
		if err := validateDelegationToken(t); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if _, dup := img.delegationTokens[t.ID]; dup {
			return fmt.Errorf("snapshot: %w: delegation token %q twice", ErrInvalidCommand, t.ID)
		}
		img.delegationTokens[t.ID] = t
	}
	return nil
}
