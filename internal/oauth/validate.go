package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	_ "crypto/sha256" // the hashes of the algorithms below
	_ "crypto/sha512"
	"math/big"
	"time"
)

// ValidateUnsecured validates an unsecured token (alg "none", no
// signature), as Kafka's default OAuthBearerUnsecuredValidatorCallbackHandler
// does: it trusts the claims as they are, so that it is for development
// only, and checks them with o at now.
func ValidateUnsecured(token string, o Options, now time.Time) (Token, error) {
	j, err := parseJWS(token)
	if err != nil {
		return Token{}, err
	}
	if j.header.Alg != "none" {
		return Token{}, invalid("an unsecured token has alg \"none\", not %q (this listener does not verify signatures)", j.header.Alg)
	}
	if len(j.signature) != 0 {
		return Token{}, invalid("an unsecured token has no signature")
	}
	return checkClaims(j.claims, o, now)
}

// ValidateSigned validates a token signed with a key of keys (KIP-768):
// the signature first, then the claims with o at now. Unsecured and
// symmetric (HS*) tokens are refused: a broker holds no shared secret.
func ValidateSigned(token string, keys KeySet, o Options, now time.Time) (Token, error) {
	j, err := parseJWS(token)
	if err != nil {
		return Token{}, err
	}
	a, ok := algorithms[j.header.Alg]
	if !ok {
		return Token{}, invalid("the token's alg %q is not one Strata verifies (RS256/384/512, PS256/384/512, ES256/384/512)", j.header.Alg)
	}
	if !verifiedByAny(keys, j, a) {
		if j.header.Kid != "" && !keys.hasKid(j.header.Kid) {
			err := invalid("no key of the key set has the token's kid %q", j.header.Kid)
			err.UnknownKey = true
			return Token{}, err
		}
		return Token{}, invalid("the token's signature does not verify with the key set")
	}
	return checkClaims(j.claims, o, now)
}

// algorithm is a JWS signature algorithm (RFC 7518 §3).
type algorithm struct {
	hash   crypto.Hash
	scheme scheme
}

type scheme int

const (
	pkcs1 scheme = iota + 1
	pss
	ecdsaScheme
)

var algorithms = map[string]algorithm{
	"RS256": {crypto.SHA256, pkcs1}, "RS384": {crypto.SHA384, pkcs1}, "RS512": {crypto.SHA512, pkcs1},
	"PS256": {crypto.SHA256, pss}, "PS384": {crypto.SHA384, pss}, "PS512": {crypto.SHA512, pss},
	"ES256": {crypto.SHA256, ecdsaScheme}, "ES384": {crypto.SHA384, ecdsaScheme}, "ES512": {crypto.SHA512, ecdsaScheme},
}

// ecCurveBits is the curve each ECDSA algorithm signs on (RFC 7518 §3.4).
var ecCurveBits = map[crypto.Hash]int{crypto.SHA256: 256, crypto.SHA384: 384, crypto.SHA512: 521}

func (s KeySet) hasKid(kid string) bool {
	for _, k := range s.keys {
		if k.kid == kid {
			return true
		}
	}
	return false
}

// verifiedByAny reports whether j's signature verifies with a key of
// keys that may sign with its algorithm: the key named by its kid, or,
// without a kid, any key.
func verifiedByAny(keys KeySet, j jws, a algorithm) bool {
	h := a.hash.New()
	h.Write([]byte(j.signingInput))
	digest := h.Sum(nil)
	for _, k := range keys.keys {
		if j.header.Kid != "" && k.kid != j.header.Kid || k.alg != "" && k.alg != j.header.Alg {
			continue
		}
		if verify(k.pub, a, digest, j.signature) {
			return true
		}
	}
	return false
}

func verify(pub crypto.PublicKey, a algorithm, digest, sig []byte) bool {
	switch key := pub.(type) {
	case *rsa.PublicKey:
		switch a.scheme {
		case pkcs1:
			return rsa.VerifyPKCS1v15(key, a.hash, digest, sig) == nil
		case pss:
			return rsa.VerifyPSS(key, a.hash, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		}
	case *ecdsa.PublicKey:
		if a.scheme != ecdsaScheme || key.Curve.Params().BitSize != ecCurveBits[a.hash] {
			return false
		}
		size := (key.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*size {
			return false // JWS signs with r || s, each of the curve's size
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(key, digest, r, s)
	}
	return false
}
