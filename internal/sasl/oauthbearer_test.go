package sasl

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeTokens accepts "good-<principal>" tokens, refuses "scope" with
// insufficient_scope and everything else with a plain error.
type fakeTokens struct{}

var fakeExpiry = time.Unix(1_900_000_000, 0)

func (fakeTokens) ValidateToken(token string) (string, time.Time, error) {
	switch {
	case strings.HasPrefix(token, "good-"):
		return strings.TrimPrefix(token, "good-"), fakeExpiry, nil
	case token == "scope":
		return "", time.Time{}, &TokenRejection{Status: "insufficient_scope", Scope: "kafka", Message: "the token lacks the scope kafka"}
	}
	return "", time.Time{}, errors.New("the token expired")
}

func oauthSession(t *testing.T, reauth bool) *Session {
	t.Helper()
	s := NewSession(&Config{Mechanisms: []string{Plain, OAuthBearer}, Credentials: fixtureCredentials(), Tokens: fakeTokens{}, Reauthenticate: reauth})
	if err := s.Handshake(OAuthBearer); err != nil {
		t.Fatal(err)
	}
	return s
}

func initialResponse(authzid, auth string, extensions ...string) []byte {
	msg := "n," + authzid + ",\x01"
	for _, e := range extensions {
		msg += e + "\x01"
	}
	return []byte(msg + "auth=" + auth + "\x01\x01")
}

func TestOAuthBearerAuthenticates(t *testing.T) {
	for name, msg := range map[string][]byte{
		"plain":            initialResponse("", "Bearer good-alice"),
		"matching authzid": initialResponse("a=alice", "Bearer good-alice"),
		"scheme any case":  initialResponse("", "bearer good-alice"),
		"extensions":       initialResponse("", "Bearer good-alice", "traceId=abc 123", "logicalCluster=lkc"),
	} {
		t.Run(name, func(t *testing.T) {
			s := oauthSession(t, false)
			reply, err := s.Authenticate(msg)
			if err != nil || len(reply) != 0 || !s.Authenticated() || s.User() != "alice" || !s.CredentialExpiry().Equal(fakeExpiry) {
				t.Fatalf("reply %q, err %v, authenticated %v as %q until %v", reply, err, s.Authenticated(), s.User(), s.CredentialExpiry())
			}
		})
	}
}

// An invalid token is answered with RFC 7628's error challenge; the
// client's 0x01 then fails the exchange with the challenge (Kafka's
// message) and the reason.
func TestOAuthBearerRefusesAToken(t *testing.T) {
	for _, tc := range []struct {
		token, challenge, reason string
	}{
		{"expired", `{"status":"invalid_token"}`, "the token expired"},
		{"scope", `{"status":"insufficient_scope","scope":"kafka"}`, "the token lacks the scope kafka"},
	} {
		s := oauthSession(t, false)
		reply, err := s.Authenticate(initialResponse("", "Bearer "+tc.token))
		if err != nil || string(reply) != tc.challenge || s.Authenticated() || !s.Pending() {
			t.Fatalf("%s: reply %q, err %v; want the challenge %s, still pending", tc.token, reply, err, tc.challenge)
		}
		_, err = s.Authenticate([]byte{1})
		if code(t, err) != CodeAuthenticationFailed || !strings.Contains(err.Error(), tc.challenge) ||
			!strings.Contains(err.Error(), tc.reason) || strings.Contains(err.Error(), "did not acknowledge") || s.Pending() {
			t.Fatalf("%s: after the acknowledgement: %v; want AUTHENTICATION_FAILED with the challenge (as Kafka) and %q", tc.token, err, tc.reason)
		}
		if _, err := s.Authenticate([]byte{1}); code(t, err) != CodeIllegalState {
			t.Fatalf("%s: a failed session answered %v", tc.token, err)
		}
	}
	s := oauthSession(t, false)
	if _, err := s.Authenticate(initialResponse("", "Bearer expired")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(initialResponse("", "Bearer good-alice")); code(t, err) != CodeAuthenticationFailed ||
		!strings.Contains(err.Error(), "did not acknowledge the error challenge") {
		t.Fatalf("a second token instead of the acknowledgement: %v, want AUTHENTICATION_FAILED saying so", err)
	}
}

func TestOAuthBearerMalformed(t *testing.T) {
	for name, msg := range map[string]string{
		"empty":                  "",
		"no GS2 header":          "\x01auth=Bearer good-alice\x01\x01",
		"channel binding":        "p=tls-unique,,\x01auth=Bearer good-alice\x01\x01",
		"no final 0x01":          "n,,\x01auth=Bearer good-alice\x01",
		"no auth":                "n,,\x01traceId=1\x01\x01",
		"another scheme":         "n,,\x01auth=Basic YWxpY2U6cHc=\x01\x01",
		"token with a space":     "n,,\x01auth=Bearer good alice\x01\x01",
		"auth twice":             "n,,\x01auth=Bearer good-alice\x01auth=Bearer good-bob\x01\x01",
		"key with a digit":       "n,,\x01k1=v\x01auth=Bearer good-alice\x01\x01",
		"authzid of another":     "n,a=bob,\x01auth=Bearer good-alice\x01\x01",
		"lone 0x01 before token": "\x01",
		"no space after Bearer":  "n,,\x01auth=Bearergood-alice\x01\x01",
		"GS2 flag y (Kafka: n)":  "y,,\x01auth=Bearer good-alice\x01\x01",
	} {
		t.Run(name, func(t *testing.T) {
			s := oauthSession(t, false)
			if _, err := s.Authenticate([]byte(msg)); code(t, err) != CodeAuthenticationFailed || s.Authenticated() || s.Pending() {
				t.Fatalf("%q: %v; want AUTHENTICATION_FAILED and a failed session", msg, err)
			}
		})
	}
}

func TestOAuthBearerNeedsAValidator(t *testing.T) {
	c := &Config{Mechanisms: []string{OAuthBearer}, Credentials: fixtureCredentials()}
	if err := c.Validate(); err == nil {
		t.Fatal("OAUTHBEARER without a TokenValidator validated")
	}
}

// Re-authentication (KIP-368) with a new token of the same principal
// renews the expiry; another principal's token fails the session. A
// token's session has a lifetime, so it may re-authenticate even without
// Config.Reauthenticate (connections.max.reauth.ms), as in Kafka.
func TestOAuthBearerReauthentication(t *testing.T) {
	for _, reauth := range []bool{true, false} {
		s := oauthSession(t, reauth)
		if _, err := s.Authenticate(initialResponse("", "Bearer good-alice")); err != nil {
			t.Fatal(err)
		}
		if err := s.Handshake(OAuthBearer); err != nil {
			t.Fatalf("Reauthenticate %v: %v", reauth, err)
		}
		if _, err := s.Authenticate(initialResponse("", "Bearer good-alice")); err != nil || !s.Authenticated() {
			t.Fatalf("Reauthenticate %v: re-authentication: %v", reauth, err)
		}
		if err := s.Handshake(OAuthBearer); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(initialResponse("", "Bearer good-bob")); code(t, err) != CodeAuthenticationFailed {
			t.Fatalf("Reauthenticate %v: re-authentication as another principal: %v", reauth, err)
		}
	}
}
