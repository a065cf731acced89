package metadata

import (
	"context"
	"fmt"
)

// The cluster's remote store. Every node of a cluster must tier to one
// store (one bucket, or one shared directory): a leader uploads a segment
// there and the followers delete their local copies of it (DESIGN §4), so
// a node with a store of its own would hold the only copy of what it
// uploaded, and a new leader could not read it. The quorum records the
// token of the store the first node claimed; that node wrote an object
// named after the token into its store first, so a node that cannot find
// the object in its own store does not share it (cmd/strata checks this
// at start).

// TierStoreTokenMaxBytes bounds a tier store token.
const TierStoreTokenMaxBytes = 64

// claimTierStoreCmd records Token as the cluster's remote store unless
// one is recorded.
type claimTierStoreCmd struct {
	Token string `json:"token"`
}

func (*claimTierStoreCmd) isCommand() {}

func applyClaimTierStore(img *Image, c *claimTierStoreCmd, index uint64) (*Image, error) {
	if err := validateTierStoreToken(c.Token); err != nil {
		return nil, err
	}
	next := img.with(index)
	if next.TierStore == "" {
		next.TierStore = c.Token
	}
	return next, nil
}

// validateTierStoreToken accepts 1 to TierStoreTokenMaxBytes lowercase hex
// digits: the token is part of an object key.
func validateTierStoreToken(token string) error {
	if token == "" || len(token) > TierStoreTokenMaxBytes {
		return fmt.Errorf("%w: tier store token of %d bytes, want 1 to %d", ErrInvalidCommand, len(token), TierStoreTokenMaxBytes)
	}
	for _, r := range token {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return fmt.Errorf("%w: tier store token %q is not lowercase hex", ErrInvalidCommand, token)
		}
	}
	return nil
}

// ClaimTierStore records token as the token of the cluster's remote store,
// unless a node recorded one before, and returns the recorded one: token,
// or the earlier token. The caller wrote the object that names token into
// its store first.
func (s *Store) ClaimTierStore(ctx context.Context, token string) (string, error) {
	img, err := s.propose(ctx, &claimTierStoreCmd{Token: token})
	if err != nil {
		return "", err
	}
	return img.TierStore, nil
}
