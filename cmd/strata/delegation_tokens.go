package main

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
)

// delegationTokens are the tokens SCRAM clients authenticate with
// (tokenauth=true), from the metadata quorum: a token created, renewed or
// expired on any broker applies to the next authentication here.
type delegationTokens struct {
	secret string
	meta   *metadata.Store
}

// tokenSaltBytes is the size of the salt a token's SCRAM credential is
// derived with, drawn anew for every authentication.
const tokenSaltBytes = 16

func (d delegationTokens) DelegationToken(mechanism, id string) (sasl.ScramCredential, string, time.Time, bool) {
	t, ok := d.meta.Image().DelegationToken(id)
	if !ok || t.ExpiredAt(time.Now().UnixMilli()) {
		return sasl.ScramCredential{}, "", time.Time{}, false
	}
	salt := make([]byte, tokenSaltBytes)
	rand.Read(salt) // never fails (crypto/rand)
	cred, err := sasl.TokenScramCredential(mechanism, sasl.TokenHMAC(d.secret, t.ID), salt)
	if err != nil {
		return sasl.ScramCredential{}, "", time.Time{}, false
	}
	// Kafka authorizes the session as User:<the owner's name>.
	_, owner, _ := strings.Cut(t.Owner, ":")
	return cred, owner, time.UnixMilli(t.ExpiryMs), true
}

// saslDelegationTokens is what a SASL listener looks tokens up with: nil
// while delegation tokens are off, which refuses tokenauth.
func saslDelegationTokens(cfg *config.Broker, meta *metadata.Store) sasl.DelegationTokens {
	if !cfg.DelegationTokens.Enabled() {
		return nil
	}
	return delegationTokens{secret: cfg.DelegationTokens.SecretKey, meta: meta}
}

// tokenSweeper removes expired delegation tokens from the quorum every
// delegation.token.expiry.check.interval.ms, on the node that leads it (as
// Kafka's controller does). An expired token is refused before then.
type tokenSweeper struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func sweepExpiredTokens(cfg *config.Broker, meta *metadata.Store, logger *slog.Logger) *tokenSweeper {
	ctx, cancel := context.WithCancel(context.Background())
	s := &tokenSweeper{cancel: cancel, done: make(chan struct{})}
	if !cfg.DelegationTokens.Enabled() {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(cfg.DelegationTokens.ExpiryCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !meta.IsController() {
				continue
			}
			n, err := meta.RemoveExpiredDelegationTokens(ctx, time.Now().UnixMilli())
			switch {
			case err != nil && ctx.Err() == nil:
				logger.Warn("removing expired delegation tokens", "err", err)
			case n > 0:
				logger.Info("removed expired delegation tokens", "tokens", n)
			}
		}
	}()
	return s
}

func (s *tokenSweeper) close() {
	if s == nil {
		return
	}
	s.cancel()
	<-s.done
}
