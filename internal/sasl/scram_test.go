package sasl

import (
	"encoding/base64"
	"strings"
	"testing"
)

const (
	cNonce     = "fyko+d2lbbFgONRv9qkxdawL"
	validFirst = "n,,n=user,r=" + cNonce
)

// validWithoutProof is the usual client-final-message-without-proof.
func validWithoutProof(x *scramCtx) string { return "c=biws,r=" + x.nonce }

// dummyProof is a proof of the right size for SCRAM-SHA-256 that no one
// can have computed.
var dummyProof = base64.StdEncoding.EncodeToString(make([]byte, 32))

func TestScramExchange(t *testing.T) {
	invalid256 := invalidScramCredentials(ScramSHA256).Message
	for _, tc := range []struct {
		name     string
		mech     string // "" is SCRAM-SHA-256
		first    string
		final    func(x *scramCtx) string // nil: the first message must fail
		password string                   // the client's; "" is the user's own
		want     string                   // substring of the error message; "" is success
		wantUser string                   // on success; "" is "user"
	}{
		// Successful exchanges.
		{name: "plain gs2 header", first: validFirst, final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) }},
		{name: "SHA-512", mech: ScramSHA512, first: validFirst, final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) }},
		{name: "client supports channel binding (y)", first: "y,,n=user,r=" + cNonce,
			final: func(x *scramCtx) string { return x.sign("c=eSws,r=" + x.nonce) }},
		{name: "authzid equal to user", first: "n,a=user,n=user,r=" + cNonce,
			final: func(x *scramCtx) string {
				return x.sign("c=" + base64.StdEncoding.EncodeToString([]byte("n,a=user,")) + ",r=" + x.nonce)
			}},
		{name: "escaped username", first: "n,,n=a=2Cb=3Dc,r=" + cNonce, wantUser: "a,b=c",
			final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) }},
		{name: "tokenauth=false is not a token", first: validFirst + ",tokenauth=false",
			final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) }},
		{name: "other extensions are ignored", first: validFirst + ",ext=1,Foo=bar",
			final: func(x *scramCtx) string { return x.sign(validWithoutProof(x) + ",ext=v") }},
		{name: "nonce of every printable character", first: "n,,n=user,r=!\"#$%&'()*+-./09:;<=>?@AZ[\\]^_`az{|}~",
			final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) }},
		// librdkafka sends its nonce before the whole server nonce; Kafka
		// accepts any nonce that ends with the server's.
		{name: "librdkafka's doubled client nonce", first: validFirst,
			final: func(x *scramCtx) string { return x.sign("c=biws,r=" + x.clientNonce + x.nonce) }},

		// Client-first-message failures.
		{name: "empty first message", first: "", want: `GS2 header must start with "n," or "y,"`},
		{name: "first message not UTF-8", first: "n,,n=us\xffer,r=abc", want: "client first message: not valid UTF-8"},
		{name: "channel binding required", first: "p=tls-unique,,n=user,r=abc", want: "channel binding (p=) is not supported"},
		{name: "unknown GS2 flag", first: "x,,n=user,r=abc", want: "GS2 header must start"},
		{name: "GS2 flag without comma", first: "n", want: "GS2 header must start"},
		{name: "GS2 header unterminated", first: "n,a=user", want: "GS2 header is not terminated"},
		{name: "GS2 flag p without a binding name", first: "p,,n=user,r=abc", want: `GS2 header must start with "n," or "y,"`},
		{name: "GS2 flag followed by a letter", first: "na,n=user,r=abc", want: `GS2 header must start with "n," or "y,"`},
		{name: "authzid without a=", first: "n,z=user,n=user,r=abc", want: `GS2 authorization identity must start with "a="`},
		{name: "authzid with bad escape", first: "n,a=us=er,n=user,r=abc", want: "authorization identity has an '='"},
		{name: "authzid empty after a=", first: "n,a=,n=user,r=abc", want: "authorization identity is empty"},
		{name: "authzid differs from user", first: "n,a=other,n=user,r=abc", want: msgAuthzidMismatch},
		{name: "authzid differs in case", first: "n,a=User,n=user,r=abc", want: msgAuthzidMismatch},
		{name: "authzid of an unknown user reveals nothing", first: "n,a=user,n=nobody,r=abc", want: invalid256},
		{name: "mandatory extension before username", first: "n,,m=ext,n=user,r=abc", want: "mandatory extension (m=)"},
		{name: "missing username", first: "n,,r=abc", want: `expected the username attribute "n="`},
		{name: "empty bare message", first: "n,,", want: `expected the username attribute "n="`},
		{name: "empty username", first: "n,,n=,r=abc", want: "username is empty"},
		{name: "username with unknown escape", first: "n,,n=us=41er,r=abc", want: "username has an '='"},
		{name: "username with lowercase escape", first: "n,,n=a=2cb,r=abc", want: "username has an '='"},
		{name: "username with trailing =", first: "n,,n=user=,r=abc", want: "username has an '='"},
		{name: "username with truncated escape", first: "n,,n=user=2,r=abc", want: "username has an '='"},
		{name: "username with NUL", first: "n,,n=us\x00er,r=abc", want: "username contains NUL"},
		{name: "missing nonce", first: "n,,n=user", want: `missing the nonce attribute "r="`},
		{name: "nonce out of order", first: "n,,n=user,x=1,r=abc", want: `expected the nonce attribute "r="`},
		{name: "empty nonce", first: "n,,n=user,r=", want: "nonce must be non-empty printable ASCII"},
		{name: "nonce with space", first: "n,,n=user,r=ab cd", want: "nonce must be non-empty printable ASCII"},
		{name: "nonce with DEL", first: "n,,n=user,r=ab\x7f", want: "nonce must be non-empty printable ASCII"},
		{name: "nonce not ASCII", first: "n,,n=user,r=abé", want: "nonce must be non-empty printable ASCII"},
		{name: "extension without =", first: validFirst + ",ext", want: "an extension must be key=value"},
		{name: "extension with empty key", first: validFirst + ",=v", want: "an extension must be key=value"},
		{name: "extension with empty value", first: validFirst + ",k=", want: "an extension must be key=value"},
		{name: "extension key not letters", first: validFirst + ",k1=v", want: "an extension key must be ASCII letters"},
		{name: "extension value with NUL", first: validFirst + ",k=a\x00b", want: "an extension value contains NUL"},
		{name: "extension value starting with NUL", first: validFirst + ",k=\x00b", want: "an extension value contains NUL"},
		{name: "trailing comma", first: validFirst + ",", want: "an extension must be key=value"},
		{name: "mandatory extension after nonce", first: validFirst + ",m=x", want: "mandatory extension (m=)"},
		{name: "delegation token, tokens off", first: validFirst + ",tokenauth=true", want: "delegation tokens are off on this broker"},
		{name: "delegation token any case, tokens off", first: validFirst + ",tokenauth=TRUE", want: "delegation.token.secret.key"},
		{name: "unknown user", first: "n,,n=nobody,r=abc", want: invalid256},
		{name: "username is case-sensitive", first: "n,,n=User,r=abc", want: invalid256},
		{name: "no credential for this mechanism", mech: ScramSHA512, first: "n,,n=sha256only,r=abc",
			want: invalidScramCredentials(ScramSHA512).Message},
		{name: "stored credential below minimum iterations", first: "n,,n=weak,r=abc", want: invalid256},
		{name: "first message over the limit", first: validFirst + strings.Repeat("a", maxMessageBytes), want: "over the limit of 65536 bytes"},

		// Client-final-message failures.
		{name: "empty final message", first: validFirst, final: func(*scramCtx) string { return "" },
			want: `expected "c=", "r=" and "p=" attributes`},
		{name: "final not UTF-8", first: validFirst, final: func(x *scramCtx) string { return "c=biws,r=\xff,p=" + dummyProof },
			want: "client final message: not valid UTF-8"},
		{name: "no proof", first: validFirst, final: func(x *scramCtx) string { return validWithoutProof(x) },
			want: `the proof "p=" must be the last attribute`},
		{name: "proof not last", first: validFirst, final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) + ",x=1" },
			want: `the proof "p=" must be the last attribute`},
		{name: "proof twice", first: validFirst, final: func(x *scramCtx) string { return x.sign(validWithoutProof(x) + ",p=" + dummyProof) },
			want: `the proof "p=" must appear once, last`},
		{name: "proof not base64", first: validFirst, final: func(x *scramCtx) string { return validWithoutProof(x) + ",p=!!!!" },
			want: "proof is not canonical base64"},
		{name: "proof with a newline", first: validFirst, final: func(x *scramCtx) string {
			s := x.sign(validWithoutProof(x))
			return s[:len(s)-10] + "\n" + s[len(s)-10:]
		}, want: "proof is not canonical base64"},
		{name: "proof without padding", first: validFirst, final: func(x *scramCtx) string { return strings.TrimRight(x.sign(validWithoutProof(x)), "=") },
			want: "proof is not canonical base64"},
		{name: "proof with non-zero padding bits", first: validFirst, final: func(x *scramCtx) string {
			return validWithoutProof(x) + ",p=" + dummyProof[:len(dummyProof)-2] + "B="
		}, want: "proof is not canonical base64"},
		{name: "proof too short", first: validFirst, final: func(x *scramCtx) string {
			return validWithoutProof(x) + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 31))
		}, want: "proof is 31 bytes, want 32"},
		// A longer proof whose first bytes are right must not pass: the
		// proof has exactly one spelling.
		{name: "valid proof with a byte appended", first: validFirst, final: func(x *scramCtx) string {
			proof := clientProof(x.mech, x.salted, x.authMessage(validWithoutProof(x)))
			return validWithoutProof(x) + ",p=" + base64.StdEncoding.EncodeToString(append(proof, 0))
		}, want: "proof is 33 bytes, want 32"},
		{name: "SHA-256 sized proof for SHA-512", mech: ScramSHA512, first: validFirst, final: func(x *scramCtx) string {
			return validWithoutProof(x) + ",p=" + dummyProof
		}, want: "proof is 32 bytes, want 64"},
		{name: "missing channel binding", first: validFirst, final: func(x *scramCtx) string { return "r=" + x.nonce + ",p=" + dummyProof },
			want: `expected the channel binding attribute "c=" first`},
		{name: "missing nonce in final", first: validFirst, final: func(x *scramCtx) string { return "c=biws,p=" + dummyProof },
			want: `missing the nonce attribute "r="`},
		{name: "nonce out of order in final", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=biws,x=1,r=" + x.nonce) },
			want: `expected the nonce attribute "r=" after the channel binding`},
		{name: "channel binding of another header", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=eSws,r=" + x.nonce) },
			want: "channel binding (c=) does not match"},
		{name: "channel binding without the authzid", first: "n,a=user,n=user,r=" + cNonce, final: func(x *scramCtx) string { return x.sign("c=biws,r=" + x.nonce) },
			want: "channel binding (c=) does not match"},
		// c= must be the whole GS2 header: a prefix of its base64 (here
		// of "biws") or nothing binds nothing.
		{name: "channel binding truncated", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=bi,r=" + x.nonce) },
			want: "channel binding (c=) does not match"},
		{name: "channel binding empty", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=,r=" + x.nonce) },
			want: "channel binding (c=) does not match"},
		{name: "channel binding not base64", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=bi*s,r=" + x.nonce) },
			want: "channel binding (c=) does not match"},
		{name: "nonce is only the client's", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=biws,r=" + x.clientNonce) },
			want: "Invalid client nonce in the final client message"},
		{name: "nonce without the server's suffix", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=biws,r=" + x.nonce[:len(x.nonce)-1]) },
			want: "Invalid client nonce in the final client message"},
		{name: "nonce with an extra character", first: validFirst, final: func(x *scramCtx) string { return x.sign("c=biws,r=" + x.nonce + "x") },
			want: "Invalid client nonce in the final client message"},
		{name: "mandatory extension in final", first: validFirst, final: func(x *scramCtx) string { return x.sign(validWithoutProof(x) + ",m=x") },
			want: "mandatory extension (m=)"},
		{name: "malformed extension in final", first: validFirst, final: func(x *scramCtx) string { return x.sign(validWithoutProof(x) + ",1=x") },
			want: "an extension key must be ASCII letters"},
		{name: "wrong password", first: validFirst, password: "pencil2", final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) },
			want: invalid256},
		{name: "wrong password SHA-512", mech: ScramSHA512, first: validFirst, password: "Pencil",
			final: func(x *scramCtx) string { return x.sign(validWithoutProof(x)) },
			want:  "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"},
		{name: "proof with one bit flipped", first: validFirst, final: func(x *scramCtx) string {
			proof := clientProof(x.mech, x.salted, x.authMessage(validWithoutProof(x)))
			proof[7] ^= 0x10
			return validWithoutProof(x) + ",p=" + base64.StdEncoding.EncodeToString(proof)
		}, want: invalid256},
		{name: "proof over another AuthMessage", first: validFirst, final: func(x *scramCtx) string {
			proof := clientProof(x.mech, x.salted, x.authMessage(validWithoutProof(x)+",ext=v"))
			return validWithoutProof(x) + ",p=" + base64.StdEncoding.EncodeToString(proof)
		}, want: invalid256},
		{name: "proof of the stored key itself", first: validFirst, final: func(x *scramCtx) string {
			// A client that knows only StoredKey (a leaked credential) cannot
			// forge a proof: it needs ClientKey.
			stored := fixtureCredentials().scram[[2]string{ScramSHA256, "user"}].StoredKey
			return validWithoutProof(x) + ",p=" + base64.StdEncoding.EncodeToString(stored)
		}, want: invalid256},
		{name: "final message over the limit", first: validFirst, final: func(x *scramCtx) string {
			return x.sign(validWithoutProof(x) + ",x=" + strings.Repeat("a", maxMessageBytes))
		}, want: "over the limit of 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mech := tc.mech
			if mech == "" {
				mech = ScramSHA256
			}
			s := newTestSession(t)
			if err := s.Handshake(mech); err != nil {
				t.Fatal(err)
			}
			serverFirst, err := s.Authenticate([]byte(tc.first))
			if tc.final == nil {
				checkFailed(t, s, err, tc.want)
				return
			}
			if err != nil {
				t.Fatalf("client-first: %v", err)
			}
			if !s.Pending() || s.Authenticated() {
				t.Fatalf("after client-first: Pending %v, Authenticated %v; want true, false", s.Pending(), s.Authenticated())
			}
			wantUser := tc.wantUser
			if wantUser == "" {
				wantUser = "user"
			}
			password := tc.password
			if password == "" {
				password = scramPasswords[wantUser]
			}
			x := newScramCtx(t, mech, tc.first, string(serverFirst), password)
			final := tc.final(x)
			reply, err := s.Authenticate([]byte(final))
			if tc.want != "" {
				checkFailed(t, s, err, tc.want)
				return
			}
			if err != nil {
				t.Fatalf("client-final: %v", err)
			}
			withoutProof := final[:strings.LastIndex(final, ",p=")]
			if want := serverFinal(mech, x.salted, x.authMessage(withoutProof)); string(reply) != want {
				t.Errorf("server-final = %q, want %q", reply, want)
			}
			if !s.Authenticated() || s.Pending() || s.User() != wantUser || s.Principal() != "User:"+wantUser {
				t.Errorf("Authenticated %v, Pending %v, User %q, Principal %q; want true, false, %q", s.Authenticated(), s.Pending(), s.User(), s.Principal(), wantUser)
			}
		})
	}
}

// checkFailed checks that err is SASL_AUTHENTICATION_FAILED with a message
// containing want, and that the session is failed.
func checkFailed(t *testing.T, s *Session, err error, want string) {
	t.Helper()
	if got := code(t, err); got != CodeAuthenticationFailed {
		t.Fatalf("error %v: code %d, want %d", err, got, CodeAuthenticationFailed)
	}
	if got := message(err); !strings.Contains(got, want) {
		t.Errorf("message %q does not contain %q", got, want)
	}
	if s.Authenticated() || s.Pending() || s.User() != "" || s.Principal() != "" {
		t.Errorf("after failure: Authenticated %v, Pending %v, User %q, Principal %q", s.Authenticated(), s.Pending(), s.User(), s.Principal())
	}
	if s.exchange != nil {
		t.Error("the exchange (and its credential) outlives the failure")
	}
	if _, err := s.Authenticate([]byte(validFirst)); code(t, err) != CodeIllegalState {
		t.Errorf("Authenticate after failure: %v, want ILLEGAL_SASL_STATE", err)
	}
}

// TestScramCredentialFailureMessage pins Kafka's generic words: a client
// cannot tell an unknown user from a wrong password by the message.
func TestScramCredentialFailureMessage(t *testing.T) {
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		want := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech
		if got := invalidScramCredentials(mech).Message; got != want {
			t.Errorf("%s: %q, want %q", mech, got, want)
		}
	}
}

func TestDecodeSaslName(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "user", want: "user"},
		{in: "a=2Cb", want: "a,b"},
		{in: "a=3Db", want: "a=b"},
		{in: "=3D=2C", want: "=,"},
		{in: "=3D2C", want: "=2C"}, // decoded left to right, once
		{in: "=2C=3D=3D", want: ",=="},
		{in: "é=2Cü", want: "é,ü"},
		{in: "", err: "is empty"},
		{in: "=", err: "has an '='"},
		{in: "a=2", err: "has an '='"},
		{in: "a=2c", err: "has an '='"},
		{in: "a=3d", err: "has an '='"},
		{in: "a=41", err: "has an '='"},
		{in: "a==2C", err: "has an '='"},
		{in: "a\x00b", err: "contains NUL"},
		{in: "=2C\x00", err: "contains NUL"},
	} {
		got, err := decodeSaslName(tc.in)
		if got != tc.want || !strings.HasPrefix(err, tc.err) || (err == "") != (tc.err == "") {
			t.Errorf("decodeSaslName(%q) = %q, %q; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
