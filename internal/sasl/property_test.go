package sasl

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"pgregory.net/rapid"
)

// TestPropertyOnlyTheRightPasswordAuthenticates: for any user, password,
// salt and iteration count in range, franz-go's client with the right
// password authenticates as that user, and with any other password fails.
func TestPropertyOnlyTheRightPasswordAuthenticates(t *testing.T) {
	// Kafka clients send user and password as UTF-8; a NUL cannot travel
	// in PLAIN, and RFC 5802 forbids it in a saslname.
	text := rapid.String().Filter(func(s string) bool { return s != "" && !strings.ContainsRune(s, 0) })
	rapid.Check(t, func(t *rapid.T) {
		mech := rapid.SampledFrom(allMechanisms()).Draw(t, "mechanism")
		user := text.Draw(t, "user")
		password := text.Draw(t, "password")
		wrong := text.Filter(func(s string) bool { return s != password }).Draw(t, "wrong")

		creds := &memCredentials{plain: map[string]string{}, scram: map[[2]string]ScramCredential{}}
		if mech == Plain {
			creds.plain[user] = password
		} else {
			salt := rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "salt")
			iterations := rapid.Int32Range(MinIterations, MaxIterations).Draw(t, "iterations")
			salted, err := SaltPassword(mech, password, salt, iterations)
			if err != nil {
				t.Fatal(err)
			}
			if creds.scram[[2]string{mech, user}], err = NewScramCredential(mech, salt, salted, iterations); err != nil {
				t.Fatal(err)
			}
		}
		cfg := &Config{Mechanisms: allMechanisms(), Credentials: creds}
		for _, pass := range []string{password, wrong} {
			m := plain.Auth{User: user, Pass: pass}.AsMechanism()
			switch mech {
			case ScramSHA256:
				m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
			case ScramSHA512:
				m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
			}
			s := NewSession(cfg)
			serverErr, clientErr := runFranz(t, s, m)
			if clientErr != nil {
				t.Fatalf("the client rejected the server: %v", clientErr)
			}
			if pass == password {
				if serverErr != nil || !s.Authenticated() || s.User() != user {
					t.Fatalf("right password: %v, Authenticated %v, User %q", serverErr, s.Authenticated(), s.User())
				}
				continue
			}
			if code(t, serverErr) != CodeAuthenticationFailed || s.Authenticated() {
				t.Fatalf("wrong password: %v, Authenticated %v", serverErr, s.Authenticated())
			}
		}
	})
}
