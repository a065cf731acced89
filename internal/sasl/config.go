package sasl

import (
	"errors"
	"fmt"
	"io"
)

// Credentials is what sessions check against. Implementations must be safe
// for concurrent use; a session looks a user up once per authentication.
type Credentials interface {
	// PlainPassword is user's PLAIN password on this listener; ok is false
	// for an unknown user.
	PlainPassword(user string) (password string, ok bool)
	// Scram is user's credential for a SCRAM mechanism; ok is false if
	// there is none.
	Scram(mechanism, user string) (ScramCredential, bool)
}

// Config is one listener's SASL setup, shared by its sessions and never
// modified after the first NewSession.
type Config struct {
	// Mechanisms are the enabled mechanisms, in the order of Kafka's
	// sasl.enabled.mechanisms; each is Plain, ScramSHA256, ScramSHA512 or
	// OAuthBearer.
	Mechanisms  []string
	Credentials Credentials
	// Rand is the source of SCRAM server nonces; nil means crypto/rand.Reader.
	// Sessions of different connections read it concurrently, so it must be
	// safe for concurrent use.
	Rand io.Reader
	// Reauthenticate lets an authenticated session authenticate again
	// (KIP-368, connections.max.reauth.ms): same mechanism, same user. A
	// session whose credential expires may re-authenticate without it.
	Reauthenticate bool
	// Tokens validates the bearer tokens of OAUTHBEARER; required when
	// it is enabled.
	Tokens TokenValidator
	// DelegationTokens looks up the delegation tokens that SCRAM clients
	// authenticate with (tokenauth=true); nil refuses them.
	DelegationTokens DelegationTokens
}

// Validate reports a Config that no session can use: no mechanisms, an
// unknown or duplicate mechanism, nil Credentials.
func (c *Config) Validate() error {
	if len(c.Mechanisms) == 0 {
		return errors.New("sasl: no mechanisms enabled")
	}
	for i, m := range c.Mechanisms {
		if m != Plain && m != OAuthBearer && !IsScram(m) {
			return fmt.Errorf("sasl: unknown mechanism %q (want %s, %s, %s or %s)", m, Plain, ScramSHA256, ScramSHA512, OAuthBearer)
		}
		if m == OAuthBearer && c.Tokens == nil {
			return errors.New("sasl: OAUTHBEARER enabled without a TokenValidator")
		}
		for _, earlier := range c.Mechanisms[:i] {
			if earlier == m {
				return fmt.Errorf("sasl: mechanism %s enabled twice", m)
			}
		}
	}
	if c.Credentials == nil {
		return errors.New("sasl: nil Credentials")
	}
	return nil
}
