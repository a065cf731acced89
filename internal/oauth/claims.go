package oauth

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Statuses of RFC 7628's error response (RFC 6750 §3.1), as Kafka sends them.
const (
	StatusInvalidToken      = "invalid_token"
	StatusInsufficientScope = "insufficient_scope"
)

// Error is why a token is refused; Status and Scope go into the SASL
// error response the client sees, Message into the failure it reports.
type Error struct {
	Status  string
	Scope   string // with StatusInsufficientScope: the scopes required
	Message string
	// UnknownKey is set when no key of the set has the token's key id:
	// the set may be out of date (the provider rotated its keys).
	UnknownKey bool
}

func (e *Error) Error() string { return "oauth: " + e.Message }

// Options are what a token's claims are checked against, Kafka's
// sasl.oauthbearer.* configs (or, for unsecured tokens, the
// unsecuredValidator* options of the JAAS config).
type Options struct {
	// PrincipalClaim names the claim whose string value is the principal;
	// "" means "sub".
	PrincipalClaim string
	// ScopeClaim names the claim that lists the scopes (a string of
	// space-separated scopes, or an array of strings); "" means "scope".
	ScopeClaim string
	// RequiredScopes must all be among the token's scopes.
	RequiredScopes []string
	// ExpectedAudience, when set, must share a value with the "aud" claim.
	ExpectedAudience []string
	// ExpectedIssuer, when set, must be the "iss" claim.
	ExpectedIssuer string
	// ClockSkew is the leeway of the time checks.
	ClockSkew time.Duration
	// RequireIssuedAt refuses a token without "iat" (Kafka's secured
	// validator requires it; its unsecured one does not).
	RequireIssuedAt bool
}

// Token is a validated token: who it authenticates, until when, with
// which scopes.
type Token struct {
	Principal string
	Expires   time.Time
	IssuedAt  time.Time // zero without "iat"
	Scopes    []string
}

// checkClaims applies o to claims at now, as Kafka's validators do:
// "exp" required and not past (with the skew), "iat" (if present or
// required) not in the future and before "exp", "nbf" (if present)
// reached, the principal claim a non-empty string, the audience and
// issuer as expected, the required scopes present.
func checkClaims(claims map[string]any, o Options, now time.Time) (Token, error) {
	var t Token
	exp, ok, err := numericDate(claims, "exp")
	switch {
	case err != nil:
		return Token{}, err
	case !ok:
		return Token{}, invalid("the token has no exp (expiration time) claim")
	case !now.Before(exp.Add(o.ClockSkew)):
		return Token{}, invalid("the token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	t.Expires = exp
	iat, ok, err := numericDate(claims, "iat")
	switch {
	case err != nil:
		return Token{}, err
	case !ok && o.RequireIssuedAt:
		return Token{}, invalid("the token has no iat (issued at) claim")
	case ok && iat.After(now.Add(o.ClockSkew)):
		return Token{}, invalid("the token was issued in the future, at %s", iat.UTC().Format(time.RFC3339))
	case ok && !exp.After(iat):
		return Token{}, invalid("the token expires (%s) no later than it was issued (%s)", exp.UTC().Format(time.RFC3339), iat.UTC().Format(time.RFC3339))
	}
	t.IssuedAt = iat
	if nbf, ok, err := numericDate(claims, "nbf"); err != nil {
		return Token{}, err
	} else if ok && nbf.After(now.Add(o.ClockSkew)) {
		return Token{}, invalid("the token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	principalClaim := cmp.Or(o.PrincipalClaim, "sub")
	principal, _ := claims[principalClaim].(string)
	if strings.TrimSpace(principal) == "" {
		return Token{}, invalid("the token's %s claim (its principal) is missing or not a non-empty string", principalClaim)
	}
	t.Principal = principal
	if len(o.ExpectedAudience) > 0 {
		aud, err := stringsClaim(claims, "aud")
		if err != nil {
			return Token{}, err
		}
		if !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(o.ExpectedAudience, a) }) {
			return Token{}, invalid("the token's audience %q is none of the expected %q", aud, o.ExpectedAudience)
		}
	}
	if o.ExpectedIssuer != "" {
		if iss, _ := claims["iss"].(string); iss != o.ExpectedIssuer {
			return Token{}, invalid("the token's issuer %q is not the expected %q", iss, o.ExpectedIssuer)
		}
	}
	scopes, err := scopesClaim(claims, cmp.Or(o.ScopeClaim, "scope"))
	if err != nil {
		return Token{}, err
	}
	t.Scopes = scopes
	var missing []string
	for _, s := range o.RequiredScopes {
		if !slices.Contains(scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return Token{}, &Error{Status: StatusInsufficientScope, Scope: strings.Join(o.RequiredScopes, " "),
			Message: fmt.Sprintf("the token lacks the required scopes %q", missing)}
	}
	return t, nil
}

// numericDate reads a NumericDate claim (RFC 7519 §2: seconds since the
// epoch, possibly fractional); ok is false when it is absent.
func numericDate(claims map[string]any, name string) (time.Time, bool, error) {
	v, present := claims[name]
	if !present {
		return time.Time{}, false, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false, invalid("the token's %s claim is not a number", name)
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
		return time.Time{}, false, invalid("the token's %s claim %s is not a time", name, n)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

// stringsClaim reads a claim that is a string or an array of strings
// ("aud"); nil when absent.
func stringsClaim(claims map[string]any, name string) ([]string, error) {
	switch v := claims[name].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, it := range v {
			s, ok := it.(string)
			if !ok {
				return nil, invalid("the token's %s claim holds a value that is not a string", name)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, invalid("the token's %s claim is neither a string nor an array of strings", name)
}

// scopesClaim reads the scope claim: a string of space-separated scopes
// (RFC 8693 §4.2) or an array of strings, as Kafka accepts both.
func scopesClaim(claims map[string]any, name string) ([]string, error) {
	if s, ok := claims[name].(string); ok {
		return strings.Fields(s), nil
	}
	return stringsClaim(claims, name)
}
