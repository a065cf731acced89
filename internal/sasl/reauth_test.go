package sasl

import "testing"

// TestReauthentication: with Config.Reauthenticate an authenticated session
// may authenticate again (KIP-368), with the same mechanism and as the same
// user; anything else fails the session. Without it a second handshake is
// ILLEGAL_SASL_STATE and the session stays authenticated.
func TestReauthentication(t *testing.T) {
	plainToken := func(user, pass string) []byte { return []byte("\x00" + user + "\x00" + pass) }
	tests := []struct {
		name          string
		reauth        bool
		mechanism     string
		token         []byte
		wantHandshake int16
		wantAuth      int16
		authenticated bool // after
	}{
		{"same user again", true, Plain, plainToken("alice", "alice-secret"), 0, 0, true},
		{"another user", true, Plain, plainToken("Bob", "bob-secret"), 0, CodeAuthenticationFailed, false},
		{"wrong password", true, Plain, plainToken("alice", "nope"), 0, CodeAuthenticationFailed, false},
		{"another mechanism", true, ScramSHA256, nil, CodeUnsupportedMechanism, 0, false},
		{"not enabled", false, Plain, nil, CodeIllegalState, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSession(&Config{Mechanisms: allMechanisms(), Credentials: fixtureCredentials(), Reauthenticate: tt.reauth})
			if err := s.Handshake(Plain); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Authenticate(plainToken("alice", "alice-secret")); err != nil {
				t.Fatal(err)
			}
			got := code(t, s.Handshake(tt.mechanism))
			if got != tt.wantHandshake {
				t.Fatalf("re-handshake: code %d, want %d", got, tt.wantHandshake)
			}
			if got == 0 {
				if !s.Pending() || s.Authenticated() {
					t.Fatalf("during re-authentication: pending %v, authenticated %v", s.Pending(), s.Authenticated())
				}
				_, err := s.Authenticate(tt.token)
				if got := code(t, err); got != tt.wantAuth {
					t.Fatalf("re-authenticate: code %d, want %d (%v)", got, tt.wantAuth, err)
				}
			}
			// Every outcome ends the exchange: a refused re-authentication
			// fails the session rather than leaving it open to another try.
			if s.Pending() {
				t.Fatal("still pending after the re-authentication")
			}
			if s.Authenticated() != tt.authenticated {
				t.Fatalf("authenticated %v after, want %v", s.Authenticated(), tt.authenticated)
			}
			if tt.authenticated && (s.User() != "alice" || s.Mechanism() != Plain) {
				t.Fatalf("user %q, mechanism %q after", s.User(), s.Mechanism())
			}
		})
	}
}
