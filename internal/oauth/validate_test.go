package oauth

import (
	"crypto/rsa"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidateUnsecured(t *testing.T) {
	base := claimsAt("alice")
	for _, tc := range []struct {
		name   string
		token  string
		o      Options
		want   string // the principal; "" means refused
		status string // when refused
	}{
		{"valid", unsecuredToken(t, base), Options{}, "alice", ""},
		{"fractional times", unsecuredToken(t, with(base, "exp", float64(testNow.Unix())+0.5)), Options{}, "alice", ""},
		{"no iat", unsecuredToken(t, with(base, "iat", nil)), Options{}, "alice", ""},
		{"no iat, required", unsecuredToken(t, with(base, "iat", nil)), Options{RequireIssuedAt: true}, "", StatusInvalidToken},
		{"another principal claim", unsecuredToken(t, with(base, "client_id", "app")), Options{PrincipalClaim: "client_id"}, "app", ""},
		{"expired", unsecuredToken(t, with(base, "exp", testNow.Unix()-1)), Options{}, "", StatusInvalidToken},
		{"expired, inside the skew", unsecuredToken(t, with(base, "exp", testNow.Unix()-1)), Options{ClockSkew: 30 * time.Second}, "alice", ""},
		{"expires now", unsecuredToken(t, with(base, "exp", testNow.Unix())), Options{}, "", StatusInvalidToken},
		{"expired exactly the skew ago", unsecuredToken(t, with(base, "exp", testNow.Unix()-30)), Options{ClockSkew: 30 * time.Second}, "", StatusInvalidToken},
		{"exp past any real time", unsecuredToken(t, with(base, "exp", 1e16)), Options{}, "", StatusInvalidToken},
		{"no exp", unsecuredToken(t, with(base, "exp", nil)), Options{}, "", StatusInvalidToken},
		{"exp not a number", unsecuredToken(t, with(base, "exp", "tomorrow")), Options{}, "", StatusInvalidToken},
		{"issued in the future", unsecuredToken(t, with(base, "iat", testNow.Unix()+120)), Options{}, "", StatusInvalidToken},
		{"issued in the future, inside the skew", unsecuredToken(t, with(base, "iat", testNow.Unix()+10)), Options{ClockSkew: 30 * time.Second}, "alice", ""},
		{"iat not a number", unsecuredToken(t, with(base, "iat", "now")), Options{}, "", StatusInvalidToken},
		{"expires when issued", unsecuredToken(t, with(base, "iat", testNow.Unix()+10, "exp", testNow.Unix()+10)), Options{ClockSkew: time.Minute}, "", StatusInvalidToken},
		{"expires before issued", unsecuredToken(t, with(base, "iat", testNow.Unix()+10, "exp", testNow.Unix()+5)), Options{ClockSkew: time.Minute}, "", StatusInvalidToken},
		{"not yet valid", unsecuredToken(t, with(base, "nbf", testNow.Unix()+120)), Options{}, "", StatusInvalidToken},
		{"not yet valid, inside the skew", unsecuredToken(t, with(base, "nbf", testNow.Unix()+10)), Options{ClockSkew: 30 * time.Second}, "alice", ""},
		{"nbf not a number", unsecuredToken(t, with(base, "nbf", "soon")), Options{}, "", StatusInvalidToken},
		{"no sub", unsecuredToken(t, with(base, "sub", nil)), Options{}, "", StatusInvalidToken},
		{"empty sub", unsecuredToken(t, with(base, "sub", " ")), Options{}, "", StatusInvalidToken},
		{"sub not a string", unsecuredToken(t, with(base, "sub", 7)), Options{}, "", StatusInvalidToken},
		{"scope string", unsecuredToken(t, with(base, "scope", "read write")), Options{RequiredScopes: []string{"write"}}, "alice", ""},
		{"scope array", unsecuredToken(t, with(base, "scope", []string{"read", "write"})), Options{RequiredScopes: []string{"read", "write"}}, "alice", ""},
		{"scope missing", unsecuredToken(t, with(base, "scope", "read")), Options{RequiredScopes: []string{"write"}}, "", StatusInsufficientScope},
		{"one of two scopes missing", unsecuredToken(t, with(base, "scope", "read")), Options{RequiredScopes: []string{"read", "write"}}, "", StatusInsufficientScope},
		{"scope a number", unsecuredToken(t, with(base, "scope", 5)), Options{}, "", StatusInvalidToken},
		{"scope array holding a number", unsecuredToken(t, with(base, "scope", []any{"read", 5})), Options{}, "", StatusInvalidToken},
		{"audience", unsecuredToken(t, with(base, "aud", []string{"kafka", "other"})), Options{ExpectedAudience: []string{"kafka"}}, "alice", ""},
		{"audience string", unsecuredToken(t, with(base, "aud", "kafka")), Options{ExpectedAudience: []string{"x", "kafka"}}, "alice", ""},
		{"wrong audience", unsecuredToken(t, with(base, "aud", "web")), Options{ExpectedAudience: []string{"kafka"}}, "", StatusInvalidToken},
		{"no audience", unsecuredToken(t, base), Options{ExpectedAudience: []string{"kafka"}}, "", StatusInvalidToken},
		{"issuer", unsecuredToken(t, with(base, "iss", "https://idp")), Options{ExpectedIssuer: "https://idp"}, "alice", ""},
		{"wrong issuer", unsecuredToken(t, with(base, "iss", "https://evil")), Options{ExpectedIssuer: "https://idp"}, "", StatusInvalidToken},
		{"signed", signedToken(t, "RS256", "", testKeys().rsa, base), Options{}, "", StatusInvalidToken},
		{"alg none with a signature", unsecuredToken(t, base) + "c2ln", Options{}, "", StatusInvalidToken},
		{"alg none with a signature that is not base64", unsecuredToken(t, base) + "!!", Options{}, "", StatusInvalidToken},
		{"alg RS256 without a signature", encodeJSON(t, map[string]any{"alg": "RS256"}) + "." + encodeJSON(t, base) + ".", Options{}, "", StatusInvalidToken},
		{"padded parts", withPart(withPart(unsecuredToken(t, base), 0, pad), 1, pad), Options{}, "alice", ""},
		{"four parts", unsecuredToken(t, base) + ".", Options{}, "", StatusInvalidToken},
		{"two parts", "eyJhbGciOiJub25lIn0.e30", Options{}, "", StatusInvalidToken},
		{"not base64", "e30.!!.", Options{}, "", StatusInvalidToken},
		{"payload not an object", encodeJSON(t, map[string]any{"alg": "none"}) + "." + encodeJSON(t, []int{1}) + ".", Options{}, "", StatusInvalidToken},
		{"too long", strings.Repeat("a", maxTokenBytes+1), Options{}, "", StatusInvalidToken},
		{"too long, well-formed", unsecuredToken(t, with(base, "pad", strings.Repeat("x", maxTokenBytes))), Options{}, "", StatusInvalidToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ValidateUnsecured(tc.token, tc.o, testNow)
			checkOutcome(t, got, err, tc.want, tc.status)
		})
	}
}

// pad adds the base64 padding some encoders send.
func pad(part string) string { return part + "==" }

func checkOutcome(t *testing.T, got Token, err error, want, status string) {
	t.Helper()
	if want != "" {
		if err != nil || got.Principal != want {
			t.Fatalf("= %+v, %v; want principal %q", got, err, want)
		}
		if got.Expires.IsZero() {
			t.Fatal("a valid token without its expiry")
		}
		return
	}
	var oe *Error
	if !errors.As(err, &oe) || oe.Status != status || oe.Message == "" {
		t.Fatalf("= %+v, %v; want an Error with status %s", got, err, status)
	}
}

func TestValidateSigned(t *testing.T) {
	k := testKeys()
	keys, err := ParseKeySet(jwksOf(t, rsaJWK("r1", &k.rsa.PublicKey), ecJWK("e1", &k.p256.PublicKey), ecJWK("e2", &k.p384.PublicKey),
		ecJWK("e3", &k.p521.PublicKey),
		map[string]any{"kty": "oct", "kid": "sym", "k": "c2VjcmV0"},                        // skipped: symmetric
		map[string]any{"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"}, // skipped: encryption
	))
	if err != nil {
		t.Fatal(err)
	}
	if keys.Len() != 4 {
		t.Fatalf("%d usable keys, want 4", keys.Len())
	}
	base := claimsAt("svc")
	strict := Options{RequireIssuedAt: true, ExpectedAudience: []string{"kafka"}, ExpectedIssuer: "https://idp"}
	full := with(base, "aud", "kafka", "iss", "https://idp")
	for _, tc := range []struct {
		name   string
		token  string
		o      Options
		want   string
		status string
	}{
		{"RS256 with kid", signedToken(t, "RS256", "r1", k.rsa, base), Options{}, "svc", ""},
		{"RS512 without kid", signedToken(t, "RS512", "", k.rsa, base), Options{}, "svc", ""},
		{"PS256", signedToken(t, "PS256", "r1", k.rsa, base), Options{}, "svc", ""},
		{"ES256", signedToken(t, "ES256", "e1", k.p256, base), Options{}, "svc", ""},
		{"ES384 without kid", signedToken(t, "ES384", "", k.p384, base), Options{}, "svc", ""},
		{"ES512 on P-521", signedToken(t, "ES512", "e3", k.p521, base), Options{}, "svc", ""},
		{"audience and issuer", signedToken(t, "RS256", "r1", k.rsa, full), strict, "svc", ""},
		{"no iat", signedToken(t, "RS256", "r1", k.rsa, with(full, "iat", nil)), strict, "", StatusInvalidToken},
		{"another key", signedToken(t, "RS256", "r1", k.other, base), Options{}, "", StatusInvalidToken},
		{"another key, no kid", signedToken(t, "RS256", "", k.other, base), Options{}, "", StatusInvalidToken},
		{"unknown kid", signedToken(t, "RS256", "r9", k.rsa, base), Options{}, "", StatusInvalidToken},
		{"unknown kid, known alg", signedToken(t, "ES256", "e9", k.p256, base), Options{}, "", StatusInvalidToken},
		{"ES256 signed with the P-384 key", signedToken(t, "ES384", "e1", k.p384, base), Options{}, "", StatusInvalidToken},
		{"ES256 header, SHA-256 signature by the P-384 key", signedToken(t, "ES256", "e2", k.p384, base), Options{}, "", StatusInvalidToken},
		{"RS256 header, ECDSA signature", signedToken(t, "RS256", "e1", k.p256, base), Options{}, "", StatusInvalidToken},
		{"RS256 header, PSS signature", forgedToken(t, "RS256", "r1", k.rsa, algorithms["PS256"], rsa.PSSSaltLengthEqualsHash, base), Options{}, "", StatusInvalidToken},
		{"PS256 with an empty salt", forgedToken(t, "PS256", "r1", k.rsa, algorithms["PS256"], 0, base), Options{}, "", StatusInvalidToken},
		{"alg none, RS256 signature", forgedToken(t, "none", "r1", k.rsa, algorithms["RS256"], 0, base), Options{}, "", StatusInvalidToken},
		{"ES256 signature with a zero byte before s", withPart(signedToken(t, "ES256", "e1", k.p256, base), 2, zeroBeforeS(t, 32)), Options{}, "", StatusInvalidToken},
		{"unsecured", unsecuredToken(t, base), Options{}, "", StatusInvalidToken},
		{"HS256", encodeJSON(t, map[string]any{"alg": "HS256"}) + "." + encodeJSON(t, base) + ".c2ln", Options{}, "", StatusInvalidToken},
		{"expired", signedToken(t, "RS256", "r1", k.rsa, with(base, "exp", testNow.Unix()-100)), Options{}, "", StatusInvalidToken},
		{"tampered claims", tamper(t, signedToken(t, "RS256", "r1", k.rsa, base)), Options{}, "", StatusInvalidToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ValidateSigned(tc.token, keys, tc.o, testNow)
			checkOutcome(t, got, err, tc.want, tc.status)
		})
	}
}

// zeroBeforeS inserts a zero byte between r and s of an ECDSA signature
// whose halves are size bytes: the same numbers, the wrong encoding.
func zeroBeforeS(t *testing.T, size int) func(string) string {
	return func(part string) string {
		sig, err := b64.DecodeString(part)
		if err != nil || len(sig) != 2*size {
			t.Fatalf("signature %q is not %d bytes of base64url", part, 2*size)
		}
		return b64.EncodeToString(append(append(sig[:size:size], 0), sig[size:]...))
	}
}

// tamper replaces the payload of a signed token with other claims, keeping
// the signature.
func tamper(t *testing.T, token string) string {
	return withPart(token, 1, func(string) string { return encodeJSON(t, claimsAt("admin")) })
}

// A token whose kid the set lacks says so: the caller refreshes the set.
func TestUnknownKeyIsReported(t *testing.T) {
	k := testKeys()
	keys, err := ParseKeySet(jwksOf(t, rsaJWK("r1", &k.rsa.PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	var oe *Error
	if _, err := ValidateSigned(signedToken(t, "RS256", "r2", k.other, claimsAt("a")), keys, Options{}, testNow); !errors.As(err, &oe) || !oe.UnknownKey {
		t.Fatalf("a token of a rotated key: %v, want UnknownKey", err)
	}
	if _, err := ValidateSigned(signedToken(t, "RS256", "r1", k.other, claimsAt("a")), keys, Options{}, testNow); !errors.As(err, &oe) || oe.UnknownKey {
		t.Fatalf("a bad signature under a known kid: %v, want no UnknownKey", err)
	}
}
