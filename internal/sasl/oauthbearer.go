package sasl

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// OAuthBearer is the SASL/OAUTHBEARER mechanism (RFC 7628, KIP-255).
const OAuthBearer = "OAUTHBEARER"

// TokenValidator checks the bearer token of an OAUTHBEARER exchange, as
// Kafka's server callback handler does. It is the environment's (it keeps
// the clock and the keys); implementations must be safe for concurrent
// use.
type TokenValidator interface {
	// ValidateToken returns the principal the token authenticates and
	// when the token expires, or why it is refused (a *TokenRejection
	// says what the client is told; any other error is invalid_token).
	ValidateToken(token string) (principal string, expires time.Time, err error)
}

// TokenRejection is a refused token: Status ("invalid_token",
// "insufficient_scope") and Scope go into the error challenge of RFC 7628
// §3.2.2 the client sees, Message into the failure it reports.
type TokenRejection struct {
	Status  string
	Scope   string
	Message string
}

func (r *TokenRejection) Error() string { return r.Message }

// oauthExchange is the server side of one OAUTHBEARER authentication: the
// client's initial response carries the token; a valid one completes the
// exchange with an empty reply; an invalid one is answered with the error
// challenge, which the client acknowledges with a lone 0x01 before the
// exchange fails, as RFC 7628 §3.2.3 and Kafka's OAuthBearerSaslServer do.
type oauthExchange struct {
	validate TokenValidator
	user     string
	expires  time.Time
	// failure is the refusal the error challenge announced; the next
	// message fails the exchange with it.
	failure string
}

// The client's initial response (RFC 7628 §3.1): a GS2 header without
// channel binding, then key=value pairs each ended by 0x01, then 0x01.
var (
	oauthInitialResponse = regexp.MustCompile("^n,(?:a=([^,]*))?,\x01((?:[A-Za-z]+=[\x21-\x7E \t\r\n]*\x01)*)\x01$")
	oauthBearerValue     = regexp.MustCompile(`^[Bb][Ee][Aa][Rr][Ee][Rr] +([-_.a-zA-Z0-9+/=~]+)$`)
)

func (x *oauthExchange) step(msg []byte) ([]byte, bool, error) {
	if x.failure != "" {
		if string(msg) != "\x01" {
			return nil, false, authFailed(x.failure + " (and the client did not acknowledge the error challenge)")
		}
		return nil, false, authFailed(x.failure)
	}
	m := oauthInitialResponse.FindSubmatch(msg)
	if m == nil {
		return nil, false, authFailed("Invalid OAUTHBEARER client first message: not a GS2 header and key=value pairs as RFC 7628 §3.1 frames them")
	}
	authzid := string(m[1])
	var token string
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(strings.TrimSuffix(string(m[2]), "\x01"), "\x01") {
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		if seen[key] {
			return nil, false, authFailed(fmt.Sprintf("Invalid OAUTHBEARER client first message: key %q given twice", key))
		}
		seen[key] = true
		if key != "auth" {
			continue // an extension: none is validated, so none is kept, as in Kafka without an extensions validator
		}
		b := oauthBearerValue.FindStringSubmatch(value)
		if b == nil {
			return nil, false, authFailed("Invalid OAUTHBEARER client first message: the auth value is not \"Bearer <token>\"")
		}
		token = b[1]
	}
	if token == "" {
		return nil, false, authFailed("Invalid OAUTHBEARER client first message: no auth=Bearer <token>")
	}
	principal, expires, err := x.validate.ValidateToken(token)
	if err != nil {
		rejection := &TokenRejection{Status: "invalid_token", Message: err.Error()}
		errors.As(err, &rejection)
		challenge := errorChallenge(rejection)
		// Kafka's failure message is the challenge itself; clients and
		// their tests look for its status (franz-go's TestOAuthAuth wants
		// invalid_token). The reason follows it.
		x.failure = string(challenge) + ": Authentication failed: " + rejection.Message
		return challenge, false, nil
	}
	if authzid != "" && authzid != principal {
		return nil, false, authFailed("Authentication failed: Client requested an authorization id that is different from the token's principal name")
	}
	x.user, x.expires = principal, expires
	return []byte{}, true, nil
}

// errorChallenge is the server's error message of RFC 7628 §3.2.2.
func errorChallenge(r *TokenRejection) []byte {
	body := struct {
		Status string `json:"status"`
		Scope  string `json:"scope,omitempty"`
	}{r.Status, r.Scope}
	out, _ := json.Marshal(body) // two strings: cannot fail
	return out
}

func (x *oauthExchange) authenticatedUser() string { return x.user }

func (x *oauthExchange) credentialExpiry() time.Time { return x.expires }
