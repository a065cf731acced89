package sasl

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"time"
)

// Delegation tokens (KIP-48) authenticate with SCRAM: the client sends the
// token id as its user name, the token's HMAC (base64) as its password and
// the extension tokenauth=true; the session's user is then the token's
// owner.

// DelegationTokens looks tokens up for SCRAM's tokenauth. Implementations
// must be safe for concurrent use.
type DelegationTokens interface {
	// DelegationToken returns the SCRAM credential of token id for
	// mechanism, the user name of the token's owner and when the token
	// expires; ok is false for a token that is unknown or has expired.
	DelegationToken(mechanism, id string) (cred ScramCredential, owner string, expires time.Time, ok bool)
}

// TokenHMAC is a delegation token's HMAC, its secret: HMAC-SHA512 of the
// token id keyed with delegation.token.secret.key, as Kafka computes it, so
// that every broker with the same key derives the same one.
func TokenHMAC(secretKey, tokenID string) []byte {
	m := hmac.New(sha512.New, []byte(secretKey))
	m.Write([]byte(tokenID))
	return m.Sum(nil)
}

// TokenPassword is the password a client authenticates a token with: its
// HMAC in standard base64, as Kafka's clients send it.
func TokenPassword(tokenHMAC []byte) string {
	return base64.StdEncoding.EncodeToString(tokenHMAC)
}

// TokenScramIterations are the iterations of a token's SCRAM credentials,
// Kafka's minimum (it derives them with the mechanism's minimum too).
const TokenScramIterations = 4096

// TokenScramCredential derives the SCRAM credential of a token whose
// HMAC is tokenHMAC for mechanism, with salt.
func TokenScramCredential(mechanism string, tokenHMAC, salt []byte) (ScramCredential, error) {
	salted, err := SaltPassword(mechanism, TokenPassword(tokenHMAC), salt, TokenScramIterations)
	if err != nil {
		return ScramCredential{}, err
	}
	return NewScramCredential(mechanism, salt, salted, TokenScramIterations)
}
