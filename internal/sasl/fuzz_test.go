package sasl

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzMechanisms are the mechanisms FuzzSession hands to Handshake; the
// last is not enabled.
var fuzzMechanisms = []string{Plain, ScramSHA256, ScramSHA512, OAuthBearer, "GSSAPI"}

// fuzzTokens accepts one bearer token, alice's.
type fuzzTokens struct{}

const fuzzAliceToken = "alice.token.sig"

// fuzzAliceAuth matches an initial response that carries alice's token.
var fuzzAliceAuth = regexp.MustCompile(`(?i)\x01auth=bearer +alice\.token\.sig\x01`)

func (fuzzTokens) ValidateToken(token string) (string, time.Time, error) {
	if token == fuzzAliceToken {
		return "alice", time.Unix(2_000_000_000, 0), nil
	}
	return "", time.Time{}, &TokenRejection{Status: "invalid_token", Message: "not alice's token"}
}

// zeroReader makes every server nonce suffix 30 '!', so that a seed can
// hold a complete, valid SCRAM exchange. It is stateless, hence safe for
// concurrent use.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// fuzzSetup holds two users: alice, whose passwords the fuzzer may find in
// the seeds, and secret, whose PLAIN password and SCRAM salted password
// are random, so no input can authenticate as secret.
type fuzzSetup struct {
	cfg          *Config
	alicePlain   string
	aliceSCRAM   string
	aliceSalted  map[string][]byte // by mechanism
	secretSalted map[string][]byte
}

var fuzzFixture = sync.OnceValue(func() *fuzzSetup {
	fx := &fuzzSetup{alicePlain: "alice-secret", aliceSCRAM: "pencil", aliceSalted: map[string][]byte{}, secretSalted: map[string][]byte{}}
	creds := &memCredentials{
		plain: map[string]string{"alice": fx.alicePlain, "secret": base64.StdEncoding.EncodeToString(randomBytes(32))},
		scram: map[[2]string]ScramCredential{},
	}
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		h, _ := scramHashFor(mech)
		fx.aliceSalted[mech] = cachedSaltPassword(mech, fx.aliceSCRAM, rfcSalt, MinIterations)
		fx.secretSalted[mech] = randomBytes(h.sizeBytes)
		for user, salted := range map[string][]byte{"alice": fx.aliceSalted[mech], "secret": fx.secretSalted[mech]} {
			cred, err := NewScramCredential(mech, rfcSalt, salted, MinIterations)
			if err != nil {
				panic(err)
			}
			creds.scram[[2]string{mech, user}] = cred
		}
	}
	fx.cfg = &Config{Mechanisms: append(allMechanisms(), OAuthBearer), Credentials: creds, Rand: zeroReader{}, Tokens: fuzzTokens{}}
	return fx
})

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// validScramSeed is a complete SCRAM exchange for alice, made against a
// real session (the nonce is deterministic).
func validScramSeed(fx *fuzzSetup, mech, first, extension string) (string, string) {
	s := NewSession(fx.cfg)
	s.Handshake(mech)
	serverFirst, err := s.Authenticate([]byte(first))
	if err != nil {
		panic(err)
	}
	x := &scramCtx{mech: mech, bare: first[strings.Index(first, "n="):], serverFirst: string(serverFirst), salted: fx.aliceSalted[mech]}
	x.nonce = strings.TrimPrefix(strings.Split(x.serverFirst, ",")[0], "r=")
	final := x.sign("c=" + base64.StdEncoding.EncodeToString([]byte(first[:strings.Index(first, "n=")])) + ",r=" + x.nonce + extension)
	if _, err := s.Authenticate([]byte(final)); err != nil || !s.Authenticated() {
		panic(fmt.Sprintf("seed %q does not authenticate: %v", final, err)) // the fuzzer would never reach the proof check
	}
	return first, final
}

// FuzzSession feeds a mechanism and up to three tokens to a session. It
// checks that the session never panics, that errors follow the state
// machine, and that it authenticates only alice, only with her password or
// a proof computed from her salted password.
func FuzzSession(f *testing.F) {
	fx := fuzzFixture()
	f.Add(uint8(0), []byte("\x00alice\x00alice-secret"), []byte(nil), []byte(nil))
	f.Add(uint8(0), []byte("alice\x00alice\x00alice-secret"), []byte("\x00alice\x00alice-secret"), []byte(nil))
	f.Add(uint8(0), []byte("\x00alice\x00alice-secreT"), []byte(nil), []byte(nil))
	f.Add(uint8(0), []byte("\x00secret\x00"), []byte(nil), []byte(nil))
	f.Add(uint8(0), []byte(""), []byte("\x00\x00"), []byte(nil))
	for i, mech := range []string{ScramSHA256, ScramSHA512} {
		m := uint8(i + 1)
		first, final := validScramSeed(fx, mech, "n,,n=alice,r=abc", "")
		f.Add(m, []byte(first), []byte(final), []byte(final))
		first, final = validScramSeed(fx, mech, "y,a=alice,n=alice,r=a=b,ext=1", ",k=v")
		f.Add(m, []byte(first), []byte(final), []byte(nil))
		f.Add(m, []byte(first), []byte(strings.Replace(final, "p=", "p=A", 1)), []byte(nil))
		f.Add(m, []byte("n,,n=secret,r=x"), []byte("c=biws,r=x"+strings.Repeat("!", nonceSuffixChars)+",p="+dummyProof), []byte(nil))
		f.Add(m, []byte("n,,n=al=2Cice,r=x,tokenauth=true"), []byte("c=biws"), []byte(nil))
		f.Add(m, []byte("p=tls-server-end-point,,n=alice,r=x"), []byte(nil), []byte(nil))
	}
	f.Add(uint8(3), []byte("n,,\x01auth=Bearer "+fuzzAliceToken+"\x01\x01"), []byte(nil), []byte(nil))
	f.Add(uint8(3), []byte("n,a=alice,\x01k=v\x01auth=Bearer "+fuzzAliceToken+"\x01\x01"), []byte(nil), []byte(nil))
	f.Add(uint8(3), []byte("n,,\x01auth=Bearer other.token.sig\x01\x01"), []byte("\x01"), []byte(nil))
	f.Add(uint8(3), []byte("n,a=bob,\x01auth=Bearer "+fuzzAliceToken+"\x01\x01"), []byte(nil), []byte(nil))
	f.Add(uint8(4), []byte("\x00alice\x00alice-secret"), []byte(nil), []byte(nil))

	f.Fuzz(func(t *testing.T, mechIndex uint8, t1, t2, t3 []byte) {
		mech := fuzzMechanisms[int(mechIndex)%len(fuzzMechanisms)]
		s := NewSession(fx.cfg)
		if err := s.Handshake(mech); err != nil {
			if mech != "GSSAPI" || code(t, err) != CodeUnsupportedMechanism {
				t.Fatalf("Handshake(%s) = %v", mech, err)
			}
			if _, err := s.Authenticate(t1); code(t, err) != CodeIllegalState {
				t.Fatalf("Authenticate after an unsupported mechanism = %v", err)
			}
			return
		}
		tokens := [][]byte{t1, t2, t3}
		var replies [][]byte
		failedAt := -1
		for i, tok := range tokens {
			before := s.state
			reply, err := s.Authenticate(tok)
			switch {
			case before == stateFailed:
				if code(t, err) != CodeIllegalState || s.state != stateFailed {
					t.Fatalf("token %d on a failed session: %v, state %v", i, err, s.state)
				}
			case before == stateAuthenticated:
				if code(t, err) != CodeIllegalState || !s.Authenticated() {
					t.Fatalf("token %d on an authenticated session: %v, state %v", i, err, s.state)
				}
			case err != nil:
				var e *Error
				if !errors.As(err, &e) || e.Code != CodeAuthenticationFailed || reply != nil || s.state != stateFailed {
					t.Fatalf("token %d: error %v, reply %q, state %v", i, err, reply, s.state)
				}
				failedAt = i
			default:
				if reply == nil {
					t.Fatalf("token %d: nil reply without an error", i)
				}
				replies = append(replies, reply)
			}
		}
		if s.Authenticated() == (s.User() == "") || s.Pending() == (s.state != stateExchanging) {
			t.Fatalf("state %v: Authenticated %v, Pending %v, User %q", s.state, s.Authenticated(), s.Pending(), s.User())
		}
		if !s.Authenticated() {
			return
		}
		if s.User() != "alice" || failedAt >= 0 {
			t.Fatalf("authenticated as %q (failure at token %d)", s.User(), failedAt)
		}
		if mech == Plain {
			if tok := string(t1); tok != "\x00alice\x00alice-secret" && tok != "alice\x00alice\x00alice-secret" {
				t.Fatalf("PLAIN authenticated with %q", tok)
			}
			return
		}
		if mech == OAuthBearer {
			if !fuzzAliceAuth.Match(t1) {
				t.Fatalf("OAUTHBEARER authenticated without alice's token: %q", t1)
			}
			return
		}
		checkFuzzProof(t, fx, mech, string(t1), string(replies[0]), string(t2), string(replies[1]))
	})
}

// checkFuzzProof recomputes, independently, the proof alice's client would
// send for this exchange and the server signature it expects.
func checkFuzzProof(t *testing.T, fx *fuzzSetup, mech, first, serverFirst, final, serverFinalMsg string) {
	t.Helper()
	_, afterFlag, _ := strings.Cut(first, ",")
	_, bare, _ := strings.Cut(afterFlag, ",")
	cut := strings.LastIndex(final, ",p=")
	if cut < 0 {
		t.Fatalf("authenticated by a final message without a proof: %q", final)
	}
	authMessage := bare + "," + serverFirst + "," + final[:cut]
	want := base64.StdEncoding.EncodeToString(clientProof(mech, fx.aliceSalted[mech], authMessage))
	if final[cut+3:] != want {
		t.Fatalf("authenticated with proof %q, alice's is %q", final[cut+3:], want)
	}
	if wantFinal := serverFinal(mech, fx.aliceSalted[mech], authMessage); serverFinalMsg != wantFinal {
		t.Fatalf("server-final %q, want %q", serverFinalMsg, wantFinal)
	}
}
