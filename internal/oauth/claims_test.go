package oauth

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestValidTokenCarriesItsClaims: a valid token reports its principal,
// expiry, issue time and scopes.
func TestValidTokenCarriesItsClaims(t *testing.T) {
	claims := with(claimsAt("alice"), "scope", "read write", "iat", float64(testNow.Unix())-0.25)
	got, err := ValidateUnsecured(unsecuredToken(t, claims), Options{}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	want := Token{
		Principal: "alice",
		Expires:   testNow.Add(time.Hour),
		IssuedAt:  testNow.Add(-250 * time.Millisecond),
		Scopes:    []string{"read", "write"},
	}
	if !got.Expires.Equal(want.Expires) || !got.IssuedAt.Equal(want.IssuedAt) ||
		got.Principal != want.Principal || !reflect.DeepEqual(got.Scopes, want.Scopes) {
		t.Fatalf("token = %+v, want %+v", got, want)
	}
}

// TestRefusalSaysWhy: a refusal names the claim at fault (the message is
// the failure the client reports) and, for missing scopes, the scopes the
// broker requires (the scope of the SASL error response).
func TestRefusalSaysWhy(t *testing.T) {
	base := claimsAt("alice")
	for _, tc := range []struct {
		name    string
		claims  map[string]any
		o       Options
		message string // a part of the message
		scope   string
	}{
		{"no exp", with(base, "exp", nil), Options{}, "no exp", ""},
		{"exp not a number", with(base, "exp", "tomorrow"), Options{}, "exp claim is not a number", ""},
		{"expired", with(base, "exp", testNow.Unix()-1), Options{}, "expired", ""},
		{"aud not strings", with(base, "aud", 5), Options{ExpectedAudience: []string{"kafka"}}, "aud claim is neither", ""},
		{"aud array holding a number", with(base, "aud", []any{"kafka", 5}), Options{ExpectedAudience: []string{"kafka"}}, "aud claim holds a value", ""},
		{"scopes missing", with(base, "scope", "read"), Options{RequiredScopes: []string{"read", "write"}}, `["write"]`, "read write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateUnsecured(unsecuredToken(t, tc.claims), tc.o, testNow)
			var oe *Error
			if !errors.As(err, &oe) || !strings.Contains(oe.Message, tc.message) || oe.Scope != tc.scope {
				t.Fatalf("= %v; want an Error saying %q with scope %q", err, tc.message, tc.scope)
			}
		})
	}
}
