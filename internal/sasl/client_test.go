package sasl

import (
	"context"
	"errors"
	"strings"
	"testing"

	kgosasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	xdgscram "github.com/xdg-go/scram"
)

// Real client code as the peer: franz-go's PLAIN and SCRAM clients and
// xdg-go/scram (kafka-go's), both mechanisms, right and wrong passwords.

// runFranz drives a franz-go SASL session against s as franz-go's broker
// connection does. serverErr is the session's error, clientErr franz-go's
// (it verifies the server signature).
func runFranz(t fataler, s *Session, m kgosasl.Mechanism) (serverErr, clientErr error) {
	t.Helper()
	if err := s.Handshake(m.Name()); err != nil {
		return err, nil
	}
	client, msg, err := m.Authenticate(context.Background(), "broker:9092")
	if err != nil {
		t.Fatalf("franz-go Authenticate: %v", err)
	}
	for range 3 {
		reply, err := s.Authenticate(msg)
		if err != nil {
			return err, nil
		}
		done, next, err := client.Challenge(reply)
		if err != nil || done {
			return nil, err
		}
		msg = next
	}
	t.Fatal("franz-go exchange did not finish in three steps")
	return nil, nil
}

// runXdg drives an xdg-go/scram conversation against s.
func runXdg(t *testing.T, s *Session, mech, user, pass, authzid string) (serverErr, clientErr error) {
	t.Helper()
	hash := xdgscram.SHA256
	if mech == ScramSHA512 {
		hash = xdgscram.SHA512
	}
	client, err := hash.NewClient(user, pass, authzid)
	if err != nil {
		t.Fatal(err)
	}
	conv := client.NewConversation()
	if err := s.Handshake(mech); err != nil {
		return err, nil
	}
	msg, err := conv.Step("")
	if err != nil {
		t.Fatal(err)
	}
	for !conv.Done() {
		reply, err := s.Authenticate([]byte(msg))
		if err != nil {
			return err, nil
		}
		if msg, err = conv.Step(string(reply)); err != nil {
			return nil, err
		}
	}
	if !conv.Valid() {
		return nil, errors.New("xdg-go: conversation done but not valid")
	}
	return nil, nil
}

func TestFranzGoClients(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mech     kgosasl.Mechanism
		wantUser string
		want     string // substring of the server's error; "" is success
	}{
		{"PLAIN", plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(), "alice", ""},
		{"PLAIN with authzid", plain.Auth{Zid: "alice", User: "alice", Pass: "alice-secret"}.AsMechanism(), "alice", ""},
		{"PLAIN non-ASCII", plain.Auth{User: "é,=", Pass: "pässwörd"}.AsMechanism(), "é,=", ""},
		{"PLAIN wrong password", plain.Auth{User: "alice", Pass: "alice-secreT"}.AsMechanism(), "", msgInvalidUserOrPassword},
		{"PLAIN other authzid", plain.Auth{Zid: "bob", User: "alice", Pass: "alice-secret"}.AsMechanism(), "", msgAuthzidMismatch},
		{"SHA-256", scram.Auth{User: "user", Pass: "pencil"}.AsSha256Mechanism(), "user", ""},
		{"SHA-512", scram.Auth{User: "user", Pass: "pencil"}.AsSha512Mechanism(), "user", ""},
		{"SHA-256 escaped user", scram.Auth{User: "a,b=c", Pass: "pw-escaped"}.AsSha256Mechanism(), "a,b=c", ""},
		{"SHA-512 escaped user", scram.Auth{User: "a,b=c", Pass: "pw-escaped"}.AsSha512Mechanism(), "a,b=c", ""},
		{"SHA-256 with authzid", scram.Auth{Zid: "user", User: "user", Pass: "pencil"}.AsSha256Mechanism(), "user", ""},
		{"SHA-256 wrong password", scram.Auth{User: "user", Pass: "pencil2"}.AsSha256Mechanism(), "", "invalid credentials with SASL mechanism SCRAM-SHA-256"},
		{"SHA-512 wrong password", scram.Auth{User: "user", Pass: "Pencil"}.AsSha512Mechanism(), "", "invalid credentials with SASL mechanism SCRAM-SHA-512"},
		{"SHA-512 password of SHA-256", scram.Auth{User: "sha256only", Pass: "only-256"}.AsSha512Mechanism(), "", "invalid credentials with SASL mechanism SCRAM-SHA-512"},
		{"SHA-256 unknown user", scram.Auth{User: "nobody", Pass: "pencil"}.AsSha256Mechanism(), "", "invalid credentials"},
		{"SHA-256 other authzid", scram.Auth{Zid: "root", User: "user", Pass: "pencil"}.AsSha256Mechanism(), "", msgAuthzidMismatch},
		{"SHA-256 delegation token, tokens off", scram.Auth{User: "user", Pass: "pencil", IsToken: true}.AsSha256Mechanism(), "", "delegation.token.secret.key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(t)
			serverErr, clientErr := runFranz(t, s, tc.mech)
			checkPeerResult(t, s, serverErr, clientErr, tc.wantUser, tc.want)
		})
	}
}

func TestXdgGoClient(t *testing.T) {
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		for _, tc := range []struct {
			name, user, pass, authzid string
			wantUser, want            string
		}{
			{name: "right password", user: "user", pass: "pencil", wantUser: "user"},
			{name: "escaped user", user: "a,b=c", pass: "pw-escaped", wantUser: "a,b=c"},
			{name: "wrong password", user: "user", pass: "pencil!", want: "invalid credentials with SASL mechanism " + mech},
			{name: "unknown user", user: "nobody", pass: "pencil", want: "invalid credentials with SASL mechanism " + mech},
			// xdg-go/scram v1.1.2 writes an authzid as "n,user," without the
			// "a=" that RFC 5802 §7 requires; Kafka's ClientFirstMessage
			// pattern rejects it too.
			{name: "authzid without a=", user: "user", pass: "pencil", authzid: "user", want: `GS2 authorization identity must start with "a="`},
		} {
			t.Run(mech+"/"+tc.name, func(t *testing.T) {
				s := newTestSession(t)
				serverErr, clientErr := runXdg(t, s, mech, tc.user, tc.pass, tc.authzid)
				checkPeerResult(t, s, serverErr, clientErr, tc.wantUser, tc.want)
			})
		}
	}
}

func checkPeerResult(t *testing.T, s *Session, serverErr, clientErr error, wantUser, want string) {
	t.Helper()
	if clientErr != nil {
		t.Fatalf("the client rejected the server: %v", clientErr)
	}
	if want != "" {
		if code(t, serverErr) != CodeAuthenticationFailed || !strings.Contains(message(serverErr), want) {
			t.Fatalf("server error %v, want SASL_AUTHENTICATION_FAILED containing %q", serverErr, want)
		}
		if s.Authenticated() {
			t.Fatal("authenticated after an error")
		}
		return
	}
	if serverErr != nil {
		t.Fatalf("server: %v", serverErr)
	}
	if !s.Authenticated() || s.User() != wantUser {
		t.Fatalf("Authenticated %v, User %q; want true, %q", s.Authenticated(), s.User(), wantUser)
	}
}

// TestCredentialMatchesXdgGo checks NewScramCredential against an
// independent implementation of RFC 5802's key derivation.
func TestCredentialMatchesXdgGo(t *testing.T) {
	for _, mech := range []string{ScramSHA256, ScramSHA512} {
		hash := xdgscram.SHA256
		if mech == ScramSHA512 {
			hash = xdgscram.SHA512
		}
		client, err := hash.NewClientUnprepped("user", "pencil", "")
		if err != nil {
			t.Fatal(err)
		}
		want := client.GetStoredCredentials(xdgscram.KeyFactors{Salt: string(rfcSalt), Iters: 4096})
		got := fixtureCredentials().scram[[2]string{mech, "user"}]
		if string(got.StoredKey) != string(want.StoredKey) || string(got.ServerKey) != string(want.ServerKey) {
			t.Errorf("%s: StoredKey %x ServerKey %x; xdg-go derives %x and %x", mech, got.StoredKey, got.ServerKey, want.StoredKey, want.ServerKey)
		}
	}
}
