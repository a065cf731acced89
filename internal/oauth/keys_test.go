package oauth

import (
	"math/big"
	"testing"
)

func TestParseKeySetRefusals(t *testing.T) {
	k := testKeys()
	for name, doc := range map[string][]byte{
		"not JSON":       []byte("keys"),
		"no keys":        []byte(`{"keys":[]}`),
		"only symmetric": jwksOf(t, map[string]any{"kty": "oct", "k": "c2VjcmV0"}),
	} {
		if _, err := ParseKeySet(doc); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	// A malformed key of a usable type refuses the whole set, even beside
	// a good key: it is a provider's mistake, not a key to skip.
	good := ecJWK("good", &k.p256.PublicKey)
	rsaWith := func(nBytes []byte, e int64) map[string]any {
		key := rsaJWK("r", &k.rsa.PublicKey)
		key["n"], key["e"] = b64.EncodeToString(nBytes), b64.EncodeToString(big.NewInt(e).Bytes())
		return key
	}
	n := k.rsa.N.Bytes()
	offCurve := ecJWK("c", &k.p256.PublicKey)
	offCurve["y"] = offCurve["x"]
	for name, bad := range map[string]map[string]any{
		"RSA of 512 bits":           rsaWith(n[:64], 65537),
		"RSA of 2040 bits":          rsaWith(n[:255], 65537),
		"RSA exponent 1":            rsaWith(n, 1),
		"RSA even exponent":         rsaWith(n, 65538),
		"RSA exponent of 5 bytes":   rsaWith(n, 1<<32+1),
		"bad RSA modulus":           {"kty": "RSA", "n": "!!", "e": "AQAB"},
		"point off curve":           offCurve,
		"short EC coordinate":       {"kty": "EC", "crv": "P-256", "x": "AQAB", "y": "AQAB"},
		"EC coordinates not base64": {"kty": "EC", "crv": "P-256", "x": "!!", "y": "!!"},
	} {
		if _, err := ParseKeySet(jwksOf(t, good, bad)); err == nil {
			t.Errorf("%s beside a good key: parsed", name)
		}
	}
}

// TestParseKeySetSkipsUnusableKeys: keys Strata does not verify with are
// left out of the set, and tokens verify with the keys that remain.
func TestParseKeySetSkipsUnusableKeys(t *testing.T) {
	k := testKeys()
	unknownCurve := ecJWK("k1", &k.p256.PublicKey)
	unknownCurve["crv"] = "secp256k1"
	keys, err := ParseKeySet(jwksOf(t, unknownCurve, map[string]any{"kty": "OKP", "crv": "Ed25519", "x": "AQAB"},
		ecJWK("e1", &k.p256.PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	if keys.Len() != 1 {
		t.Fatalf("%d usable keys, want 1", keys.Len())
	}
	got, err := ValidateSigned(signedToken(t, "ES256", "", k.p256, claimsAt("svc")), keys, Options{}, testNow)
	checkOutcome(t, got, err, "svc", "")
}

// TestKeyAlgRestrictsItsTokens: a key whose "alg" is set verifies tokens of
// that algorithm only.
func TestKeyAlgRestrictsItsTokens(t *testing.T) {
	k := testKeys()
	pinned := rsaJWK("r1", &k.rsa.PublicKey)
	pinned["alg"] = "RS256"
	keys, err := ParseKeySet(jwksOf(t, pinned))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		alg, kid string
		want     string // principal; "" means refused
	}{
		{"RS256", "r1", "svc"},
		{"RS256", "", "svc"},
		{"PS256", "r1", ""},
		{"RS512", "", ""},
	} {
		t.Run(tc.alg+" kid "+tc.kid, func(t *testing.T) {
			got, err := ValidateSigned(signedToken(t, tc.alg, tc.kid, k.rsa, claimsAt("svc")), keys, Options{}, testNow)
			checkOutcome(t, got, err, tc.want, StatusInvalidToken)
		})
	}
}
