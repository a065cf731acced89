package sasl

import (
	"strings"
	"testing"
)

func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		token    string
		want     string // the exact error message; "" is success
		wantUser string
	}{
		{name: "no authzid", token: "\x00alice\x00alice-secret", wantUser: "alice"},
		{name: "authzid equal to user", token: "alice\x00alice\x00alice-secret", wantUser: "alice"},
		{name: "non-ASCII user and password", token: "\x00é,=\x00pässwörd", wantUser: "é,="},
		{name: "authzid differs", token: "bob\x00alice\x00alice-secret", want: msgAuthzidMismatch},
		{name: "authzid differs in case", token: "Alice\x00alice\x00alice-secret", want: msgAuthzidMismatch},
		{name: "authzid differs and wrong password", token: "bob\x00alice\x00nope", want: msgInvalidUserOrPassword},
		{name: "wrong password", token: "\x00alice\x00alice-secreT", want: msgInvalidUserOrPassword},
		{name: "password prefix", token: "\x00alice\x00alice", want: msgInvalidUserOrPassword},
		{name: "password with suffix", token: "\x00alice\x00alice-secret ", want: msgInvalidUserOrPassword},
		{name: "unknown user", token: "\x00mallory\x00alice-secret", want: msgInvalidUserOrPassword},
		{name: "username is case-sensitive", token: "\x00Alice\x00alice-secret", want: msgInvalidUserOrPassword},
		{name: "another user's password", token: "\x00Bob\x00alice-secret", want: msgInvalidUserOrPassword},
		{name: "empty user", token: "\x00\x00alice-secret", want: "Authentication failed: username not specified"},
		{name: "empty password", token: "\x00alice\x00", want: "Authentication failed: password not specified"},
		{name: "empty token", token: "", want: "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{name: "no NUL", token: "alice", want: "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{name: "one NUL", token: "alice\x00alice-secret", want: "Invalid SASL/PLAIN response: expected 3 tokens, got 2"},
		{name: "three NULs", token: "\x00alice\x00alice-secret\x00", want: "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
		{name: "NUL in password", token: "\x00alice\x00alice\x00secret", want: "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
		{name: "not UTF-8", token: "\x00alice\x00alice-secret\xff", want: "Invalid SASL/PLAIN response: not valid UTF-8"},
		{name: "at the size limit", token: "\x00alice\x00" + strings.Repeat("p", maxMessageBytes-7), want: msgInvalidUserOrPassword},
		{name: "over the size limit", token: "\x00alice\x00" + strings.Repeat("p", maxMessageBytes-6),
			want: "Authentication failed: SASL message of 65537 bytes is over the limit of 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(t)
			if err := s.Handshake(Plain); err != nil {
				t.Fatal(err)
			}
			reply, err := s.Authenticate([]byte(tc.token))
			if tc.want != "" {
				if got := code(t, err); got != CodeAuthenticationFailed || message(err) != tc.want {
					t.Fatalf("error %v, want code %d message %q", err, CodeAuthenticationFailed, tc.want)
				}
				if reply != nil || s.Authenticated() || s.Pending() || s.User() != "" || s.Principal() != "" {
					t.Errorf("after failure: reply %q, Authenticated %v, Pending %v, User %q, Principal %q",
						reply, s.Authenticated(), s.Pending(), s.User(), s.Principal())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if reply == nil || len(reply) != 0 {
				t.Errorf("reply = %#v, want empty and non-nil (auth_bytes is not nullable)", reply)
			}
			if !s.Authenticated() || s.Pending() || s.User() != tc.wantUser || s.Principal() != "User:"+tc.wantUser {
				t.Errorf("Authenticated %v, Pending %v, User %q, Principal %q; want true, false, %q",
					s.Authenticated(), s.Pending(), s.User(), s.Principal(), tc.wantUser)
			}
		})
	}
}

func TestPlainPasswordEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"secret", "secret", true},
		{"secret", "Secret", false},
		{"secret", "secret\x00", false},
		{"", "x", false},
	} {
		if got := plainPasswordEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("plainPasswordEqual(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// plainLookupNotOK knows alice's password but reports her unknown (a
// disabled user, say).
type plainLookupNotOK struct{ memCredentials }

func (plainLookupNotOK) PlainPassword(user string) (string, bool) { return plainPasswords[user], false }

func TestPlainRefusesALookupThatIsNotOK(t *testing.T) {
	s := NewSession(&Config{Mechanisms: []string{Plain}, Credentials: &plainLookupNotOK{}})
	if err := s.Handshake(Plain); err != nil {
		t.Fatal(err)
	}
	_, err := s.Authenticate([]byte("\x00alice\x00alice-secret"))
	if code(t, err) != CodeAuthenticationFailed || message(err) != msgInvalidUserOrPassword || s.Authenticated() {
		t.Fatalf("the right password of a user the lookup does not vouch for: %v, authenticated %v", err, s.Authenticated())
	}
}
