package sasl

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// memTokens is an in-memory DelegationTokens: id → owner and expiry, with
// credentials derived as a broker derives them.
type memTokens struct {
	secret string
	tokens map[string]memToken
}

type memToken struct {
	owner   string
	expires time.Time
}

func (m memTokens) DelegationToken(mechanism, id string) (ScramCredential, string, time.Time, bool) {
	tok, ok := m.tokens[id]
	if !ok {
		return ScramCredential{}, "", time.Time{}, false
	}
	cred, err := TokenScramCredential(mechanism, TokenHMAC(m.secret, id), []byte("token-salt"))
	if err != nil {
		return ScramCredential{}, "", time.Time{}, false
	}
	return cred, tok.owner, tok.expires, true
}

func TestTokenHMACIsKafkas(t *testing.T) {
	// Kafka: HmacSHA512 keyed with the secret's UTF-8 bytes over the id's.
	m := hmac.New(sha512.New, []byte("secret"))
	m.Write([]byte("token-1"))
	want := m.Sum(nil)
	got := TokenHMAC("secret", "token-1")
	if !hmac.Equal(got, want) {
		t.Fatalf("TokenHMAC = %x, want %x", got, want)
	}
	if p := TokenPassword(got); p != base64.StdEncoding.EncodeToString(want) {
		t.Fatalf("TokenPassword = %q", p)
	}
	if hmac.Equal(TokenHMAC("other", "token-1"), want) || hmac.Equal(TokenHMAC("secret", "token-2"), want) {
		t.Fatal("the HMAC does not depend on the key and the id")
	}
}

func TestScramDelegationToken(t *testing.T) {
	expires := time.Unix(1_900_000_000, 0)
	tokens := memTokens{secret: "s3cret", tokens: map[string]memToken{"tok1": {owner: "alice", expires: expires}}}
	password := TokenPassword(TokenHMAC("s3cret", "tok1"))
	for _, tc := range []struct {
		name, mech, first, password string
		want                        string // "" is success
	}{
		{"SHA-256", ScramSHA256, "n,,n=tok1,r=" + cNonce + ",tokenauth=true", password, ""},
		{"SHA-512", ScramSHA512, "n,,n=tok1,r=" + cNonce + ",tokenauth=true", password, ""},
		{"authzid is the token id", ScramSHA256, "n,a=tok1,n=tok1,r=" + cNonce + ",tokenauth=true", password, ""},
		{"authzid of the owner", ScramSHA256, "n,a=alice,n=tok1,r=" + cNonce + ",tokenauth=true", password, msgAuthzidMismatch},
		{"unknown token", ScramSHA256, "n,,n=tok2,r=" + cNonce + ",tokenauth=true", password, invalidScramCredentials(ScramSHA256).Message},
		{"wrong HMAC", ScramSHA256, "n,,n=tok1,r=" + cNonce + ",tokenauth=true", TokenPassword(TokenHMAC("guess", "tok1")),
			invalidScramCredentials(ScramSHA256).Message},
		{"token id without tokenauth is a user name", ScramSHA256, "n,,n=tok1,r=" + cNonce, password, invalidScramCredentials(ScramSHA256).Message},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(&Config{Mechanisms: []string{ScramSHA256, ScramSHA512}, Credentials: fixtureCredentials(), DelegationTokens: tokens})
			if err := s.Handshake(tc.mech); err != nil {
				t.Fatal(err)
			}
			serverFirst, err := s.Authenticate([]byte(tc.first))
			if err != nil {
				if tc.want == "" || message(err) != tc.want {
					t.Fatalf("client first: %v, want %q", err, tc.want)
				}
				return
			}
			x := newScramCtx(t, tc.mech, tc.first, string(serverFirst), tc.password)
			withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(gs2Of(tc.first))) + ",r=" + x.nonce
			_, err = s.Authenticate([]byte(x.sign(withoutProof)))
			if tc.want != "" {
				if message(err) != tc.want {
					t.Fatalf("client final: %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.User() != "alice" || s.Principal() != "User:alice" || !s.TokenAuthenticated() || !s.CredentialExpiry().Equal(expires) {
				t.Fatalf("user %q principal %q token %v expiry %v; want alice, via the token, expiring %v",
					s.User(), s.Principal(), s.TokenAuthenticated(), s.CredentialExpiry(), expires)
			}
		})
	}
}

func TestPasswordSessionIsNotTokenAuthenticated(t *testing.T) {
	s := NewSession(&Config{Mechanisms: []string{ScramSHA256}, Credentials: fixtureCredentials(), DelegationTokens: memTokens{}})
	if s.TokenAuthenticated() {
		t.Fatal("token authenticated before authenticating")
	}
	if err := s.Handshake(ScramSHA256); err != nil {
		t.Fatal(err)
	}
	serverFirst, err := s.Authenticate([]byte(validFirst))
	if err != nil {
		t.Fatal(err)
	}
	x := newScramCtx(t, ScramSHA256, validFirst, string(serverFirst), scramPasswords["user"])
	if _, err := s.Authenticate([]byte(x.sign(validWithoutProof(x)))); err != nil {
		t.Fatal(err)
	}
	if s.TokenAuthenticated() || !s.CredentialExpiry().IsZero() {
		t.Fatalf("a password session: token %v, expiry %v", s.TokenAuthenticated(), s.CredentialExpiry())
	}
}

// gs2Of is the GS2 header of a client-first message ("n,," or "n,a=x,").
func gs2Of(first string) string {
	i := 0
	for commas := 0; i < len(first) && commas < 2; i++ {
		if first[i] == ',' {
			commas++
		}
	}
	return first[:i]
}

// TestFranzGoTokenClient authenticates franz-go's SCRAM client with a
// token, as a Kafka client configured with one does.
func TestFranzGoTokenClient(t *testing.T) {
	tokens := memTokens{secret: "s3cret", tokens: map[string]memToken{"tok1": {owner: "alice", expires: time.Unix(1_900_000_000, 0)}}}
	password := TokenPassword(TokenHMAC("s3cret", "tok1"))
	for _, tc := range []struct {
		name     string
		auth     scram.Auth
		sha512   bool
		wantUser string
		want     string
	}{
		{name: "SHA-256", auth: scram.Auth{User: "tok1", Pass: password, IsToken: true}, wantUser: "alice"},
		{name: "SHA-512", auth: scram.Auth{User: "tok1", Pass: password, IsToken: true}, sha512: true, wantUser: "alice"},
		{name: "wrong HMAC", auth: scram.Auth{User: "tok1", Pass: "bm90IGl0", IsToken: true}, want: "invalid credentials"},
		{name: "a user's password is not a token", auth: scram.Auth{User: "user", Pass: "pencil", IsToken: true}, want: "invalid credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(&Config{Mechanisms: allMechanisms(), Credentials: fixtureCredentials(), DelegationTokens: tokens})
			mech := tc.auth.AsSha256Mechanism()
			if tc.sha512 {
				mech = tc.auth.AsSha512Mechanism()
			}
			serverErr, clientErr := runFranz(t, s, mech)
			checkPeerResult(t, s, serverErr, clientErr, tc.wantUser, tc.want)
			if tc.want == "" && !s.TokenAuthenticated() {
				t.Fatal("not token authenticated")
			}
		})
	}
}

// fixedTokens answers every token lookup with the same result.
type fixedTokens struct {
	cred  ScramCredential
	owner string
	ok    bool
}

func (f fixedTokens) DelegationToken(string, string) (ScramCredential, string, time.Time, bool) {
	return f.cred, f.owner, time.Unix(1_900_000_000, 0), f.ok
}

// fixedScram answers every SCRAM credential lookup with the same result.
type fixedScram struct {
	cred ScramCredential
	ok   bool
}

func (fixedScram) PlainPassword(string) (string, bool)            { return "", false }
func (f fixedScram) Scram(string, string) (ScramCredential, bool) { return f.cred, f.ok }

// A lookup that is not ok (an expired token, a disabled user), a token
// without an owner or a credential the session cannot use refuses the
// client at its first message, whatever credential comes with it.
func TestScramLookupRefusals(t *testing.T) {
	token, err := TokenScramCredential(ScramSHA256, TokenHMAC("s3cret", "tok1"), []byte("token-salt"))
	if err != nil {
		t.Fatal(err)
	}
	weakToken := token
	weakToken.Iterations = MinIterations - 1
	user := fixtureCredentials().scram[[2]string{ScramSHA256, "user"}]
	tokenFirst := "n,,n=tok1,r=" + cNonce + ",tokenauth=true"
	for _, tc := range []struct {
		name   string
		creds  Credentials
		tokens DelegationTokens
		first  string
	}{
		{"token lookup not ok", fixtureCredentials(), fixedTokens{token, "alice", false}, tokenFirst},
		{"token without an owner", fixtureCredentials(), fixedTokens{token, "", true}, tokenFirst},
		{"token credential below minimum iterations", fixtureCredentials(), fixedTokens{weakToken, "alice", true}, tokenFirst},
		{"user lookup not ok", fixedScram{user, false}, nil, validFirst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSession(&Config{Mechanisms: []string{ScramSHA256}, Credentials: tc.creds, DelegationTokens: tc.tokens})
			if err := s.Handshake(ScramSHA256); err != nil {
				t.Fatal(err)
			}
			_, err := s.Authenticate([]byte(tc.first))
			checkFailed(t, s, err, invalidScramCredentials(ScramSHA256).Message)
		})
	}
}

// A token session may re-authenticate (its credential expires); while it
// does, and once that fails, it is not token-authenticated.
func TestTokenAuthenticatedOnlyWhileAuthenticated(t *testing.T) {
	tokens := memTokens{secret: "s3cret", tokens: map[string]memToken{"tok1": {owner: "alice", expires: time.Unix(1_900_000_000, 0)}}}
	s := NewSession(&Config{Mechanisms: []string{ScramSHA256}, Credentials: fixtureCredentials(), DelegationTokens: tokens})
	first := "n,,n=tok1,r=" + cNonce + ",tokenauth=true"
	exchange := func(password string) error {
		t.Helper()
		if err := s.Handshake(ScramSHA256); err != nil {
			t.Fatal(err)
		}
		serverFirst, err := s.Authenticate([]byte(first))
		if err != nil {
			t.Fatal(err)
		}
		if s.TokenAuthenticated() || s.User() != "" || s.Principal() != "" {
			t.Fatalf("in the middle of an exchange: token-authenticated %v, user %q, principal %q", s.TokenAuthenticated(), s.User(), s.Principal())
		}
		x := newScramCtx(t, ScramSHA256, first, string(serverFirst), password)
		_, err = s.Authenticate([]byte(x.sign(validWithoutProof(x))))
		return err
	}
	if err := exchange(TokenPassword(TokenHMAC("s3cret", "tok1"))); err != nil || !s.TokenAuthenticated() {
		t.Fatalf("first authentication: %v, token-authenticated %v", err, s.TokenAuthenticated())
	}
	if err := exchange("wrong"); code(t, err) != CodeAuthenticationFailed {
		t.Fatalf("re-authentication with a wrong password: %v", err)
	}
	if s.TokenAuthenticated() || s.Authenticated() || s.User() != "" || s.Principal() != "" {
		t.Fatalf("after a failed re-authentication: token-authenticated %v, authenticated %v, user %q, principal %q",
			s.TokenAuthenticated(), s.Authenticated(), s.User(), s.Principal())
	}
}
