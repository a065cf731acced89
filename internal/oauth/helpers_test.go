package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"
)

var b64 = base64.RawURLEncoding

// testKeySet holds private keys for every algorithm family the tests sign
// with.
type testKeySet struct {
	rsa   *rsa.PrivateKey
	other *rsa.PrivateKey
	p256  *ecdsa.PrivateKey
	p384  *ecdsa.PrivateKey
	p521  *ecdsa.PrivateKey
}

// testKeys are generated once: RSA key generation is slow.
var testKeys = sync.OnceValue(func() testKeySet {
	var k testKeySet
	var err error
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.other, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	if k.p256, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		panic(err)
	}
	if k.p384, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader); err != nil {
		panic(err)
	}
	if k.p521, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader); err != nil {
		panic(err)
	}
	return k
})

// rsaJWK and ecJWK are public keys as a JWKS holds them.
func rsaJWK(kid string, k *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "n": b64.EncodeToString(k.N.Bytes()),
		"e": b64.EncodeToString(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) map[string]any {
	point, err := k.Bytes() // 0x04, then x and y at the curve's size
	if err != nil {
		panic(err)
	}
	x, y := point[1:1+len(point)/2], point[1+len(point)/2:]
	return map[string]any{"kty": "EC", "kid": kid, "crv": k.Curve.Params().Name,
		"x": b64.EncodeToString(x), "y": b64.EncodeToString(y)}
}

func jwksOf(t *testing.T, keys ...map[string]any) []byte { return jwksOfTB(t, keys...) }

func jwksOfTB(t testing.TB, keys ...map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// signedToken signs claims with key under alg, with kid in the header
// when not empty.
func signedToken(t *testing.T, alg, kid string, key crypto.Signer, claims map[string]any) string {
	t.Helper()
	return forgedToken(t, alg, kid, key, algorithms[alg], rsa.PSSSaltLengthEqualsHash, claims)
}

// forgedToken is a token whose header says alg but whose signature is made
// with the algorithm a (and, for PSS, salt length pssSalt): what a
// confused or hostile signer sends.
func forgedToken(t *testing.T, alg, kid string, key crypto.Signer, a algorithm, pssSalt int, claims map[string]any) string {
	t.Helper()
	header := map[string]any{"alg": alg, "typ": "JWT"}
	if kid != "" {
		header["kid"] = kid
	}
	input := encodeJSON(t, header) + "." + encodeJSON(t, claims)
	h := a.hash.New()
	h.Write([]byte(input))
	digest := h.Sum(nil)
	var sig []byte
	var err error
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if a.scheme == pss {
			sig, err = rsa.SignPSS(rand.Reader, k, a.hash, digest, &rsa.PSSOptions{SaltLength: pssSalt})
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, k, a.hash, digest)
		}
	case *ecdsa.PrivateKey:
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, k, digest)
		size := (k.Curve.Params().BitSize + 7) / 8
		sig = append(r.FillBytes(make([]byte, size)), s.FillBytes(make([]byte, size))...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + b64.EncodeToString(sig)
}

// withPart rewrites part i (0 header, 1 payload, 2 signature) of a compact
// JWS as sent.
func withPart(token string, i int, f func(string) string) string {
	parts := strings.Split(token, ".")
	parts[i] = f(parts[i])
	return strings.Join(parts, ".")
}

// unsecuredToken is claims in an unsecured JWS (alg none, no signature).
func unsecuredToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	return encodeJSON(t, map[string]any{"alg": "none"}) + "." + encodeJSON(t, claims) + "."
}

func encodeJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b64.EncodeToString(data)
}

// testNow is the time the tests validate at.
var testNow = time.Unix(1_800_000_000, 0)

// claimsAt are valid claims for sub at testNow: issued a minute ago,
// expiring in an hour.
func claimsAt(sub string) map[string]any {
	return map[string]any{"sub": sub, "iat": testNow.Unix() - 60, "exp": testNow.Unix() + 3600}
}

func with(claims map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(claims)+len(kv)/2)
	for k, v := range claims {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}
