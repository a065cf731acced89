package sasl

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"unicode/utf8"
)

// plainExchange is the server side of one PLAIN authentication (RFC 4616):
// a single message, authzid NUL authcid NUL passwd.
type plainExchange struct {
	creds Credentials
	user  string // set when the step succeeds
}

func (x *plainExchange) step(token []byte) ([]byte, bool, error) {
	if !utf8.Valid(token) {
		return nil, false, authFailed("Invalid SASL/PLAIN response: not valid UTF-8")
	}
	// As Kafka's PlainSaslServer.extractTokens: split at most four ways
	// so that a fourth token is reported, not folded into the password.
	tokens := strings.SplitN(string(token), "\x00", 4)
	if len(tokens) != 3 {
		return nil, false, authFailed(fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(tokens)))
	}
	authzid, user, password := tokens[0], tokens[1], tokens[2]
	if user == "" {
		return nil, false, authFailed("Authentication failed: username not specified")
	}
	if password == "" {
		return nil, false, authFailed("Authentication failed: password not specified")
	}
	expected, known := x.creds.PlainPassword(user)
	// Compare even for an unknown user, so that the answer and the work
	// done are the same as for a wrong password.
	if !plainPasswordEqual(password, expected) || !known {
		return nil, false, authFailed(msgInvalidUserOrPassword)
	}
	// Kafka checks the authorization id only after the password.
	if authzid != "" && authzid != user {
		return nil, false, authFailed(msgAuthzidMismatch)
	}
	x.user = user
	return []byte{}, true, nil
}

func (x *plainExchange) authenticatedUser() string { return x.user }

// plainPasswordEqual compares in constant time. Comparing digests rather
// than the passwords themselves hides the expected password's length too,
// which subtle.ConstantTimeCompare alone would leak.
func plainPasswordEqual(given, expected string) bool {
	g := sha256.Sum256([]byte(given))
	e := sha256.Sum256([]byte(expected))
	return subtle.ConstantTimeCompare(g[:], e[:]) == 1
}
