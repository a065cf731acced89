package sasl

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const alicePlain = "\x00alice\x00alice-secret"

// op is one request on a session: a Handshake of mechanism or an
// Authenticate of token.
type op struct {
	handshake bool
	mechanism string
	token     string
	wantCode  int16 // 0 is success
}

func handshake(m string, code int16) op    { return op{handshake: true, mechanism: m, wantCode: code} }
func authenticate(t string, code int16) op { return op{token: t, wantCode: code} }

func TestSessionStateMachine(t *testing.T) {
	const (
		ok        = 0
		illegal   = CodeIllegalState
		failed    = CodeAuthenticationFailed
		unsupport = CodeUnsupportedMechanism
	)
	for _, tc := range []struct {
		name       string
		mechanisms []string // nil is all three
		ops        []op
		wantState  sessionState
	}{
		{name: "authenticate before handshake", ops: []op{
			authenticate(alicePlain, illegal), handshake(Plain, illegal), authenticate(alicePlain, illegal),
		}, wantState: stateFailed},
		{name: "handshake twice", ops: []op{
			handshake(Plain, ok), handshake(Plain, illegal), authenticate(alicePlain, illegal),
		}, wantState: stateFailed},
		{name: "handshake twice with another mechanism", ops: []op{
			handshake(Plain, ok), handshake(ScramSHA256, illegal), handshake(ScramSHA256, illegal),
		}, wantState: stateFailed},
		{name: "handshake in the middle of SCRAM", ops: []op{
			handshake(ScramSHA256, ok), authenticate(validFirst, ok), handshake(ScramSHA256, illegal), authenticate("c=biws", illegal),
		}, wantState: stateFailed},
		{name: "unsupported mechanism", ops: []op{
			handshake("GSSAPI", unsupport), handshake(Plain, illegal), authenticate(alicePlain, illegal),
		}, wantState: stateFailed},
		{name: "mechanism names are case-sensitive", ops: []op{handshake("plain", unsupport)}, wantState: stateFailed},
		{name: "empty mechanism", ops: []op{handshake("", unsupport)}, wantState: stateFailed},
		{name: "mechanism not enabled on this listener", mechanisms: []string{ScramSHA512}, ops: []op{
			handshake(Plain, unsupport), authenticate(alicePlain, illegal),
		}, wantState: stateFailed},
		{name: "SCRAM-SHA-256 not enabled", mechanisms: []string{Plain, ScramSHA512}, ops: []op{
			handshake(ScramSHA256, unsupport),
		}, wantState: stateFailed},
		{name: "requests after success leave it authenticated", ops: []op{
			handshake(Plain, ok), authenticate(alicePlain, ok), authenticate(alicePlain, illegal), handshake(Plain, illegal),
			authenticate("\x00alice\x00wrong", illegal),
		}, wantState: stateAuthenticated},
		{name: "retry after failure", ops: []op{
			handshake(Plain, ok), authenticate("\x00alice\x00wrong", failed), authenticate(alicePlain, illegal), handshake(Plain, illegal),
		}, wantState: stateFailed},
		{name: "SCRAM first step leaves it pending", ops: []op{
			handshake(ScramSHA512, ok), authenticate(validFirst, ok),
		}, wantState: stateExchanging},
		{name: "SCRAM failure at the first step", ops: []op{
			handshake(ScramSHA256, ok), authenticate("n,,n=nobody,r=x", failed), authenticate("c=biws,r=x,p="+dummyProof, illegal),
		}, wantState: stateFailed},
		{name: "SCRAM failure at the final step", ops: []op{
			handshake(ScramSHA256, ok), authenticate(validFirst, ok), authenticate("c=biws,r=x,p="+dummyProof, failed), authenticate(validFirst, illegal),
		}, wantState: stateFailed},
		{name: "PLAIN token sent to SCRAM", ops: []op{
			handshake(ScramSHA256, ok), authenticate(alicePlain, failed),
		}, wantState: stateFailed},
		{name: "SCRAM message sent to PLAIN", ops: []op{
			handshake(Plain, ok), authenticate(validFirst, failed),
		}, wantState: stateFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(t, tc.mechanisms...)
			for i, o := range tc.ops {
				var err error
				if o.handshake {
					err = s.Handshake(o.mechanism)
				} else {
					_, err = s.Authenticate([]byte(o.token))
				}
				if got := code(t, err); got != o.wantCode {
					t.Fatalf("op %d (%+v): error %v, want code %d", i, o, err, o.wantCode)
				}
			}
			if s.state != tc.wantState {
				t.Errorf("state %v, want %v", s.state, tc.wantState)
			}
			if s.Authenticated() != (tc.wantState == stateAuthenticated) || s.Pending() != (tc.wantState == stateExchanging) {
				t.Errorf("Authenticated %v, Pending %v in state %v", s.Authenticated(), s.Pending(), s.state)
			}
			if (s.User() != "") != (tc.wantState == stateAuthenticated) {
				t.Errorf("User %q in state %v", s.User(), s.state)
			}
		})
	}
}

func TestStateErrorMessages(t *testing.T) {
	s := newTestSession(t)
	_, err := s.Authenticate(nil)
	if got, want := message(err), "Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake."; got != want {
		t.Errorf("authenticate before handshake: %q, want %q", got, want)
	}
	if got, want := message(s.Handshake(Plain)), msgAlreadyFailed; got != want {
		t.Errorf("handshake after failure: %q, want %q", got, want)
	}

	s = newTestSession(t)
	if err := s.Handshake(Plain); err != nil {
		t.Fatal(err)
	}
	if got, want := message(s.Handshake(Plain)), "Unexpected Kafka request of type SASL_HANDSHAKE during SASL authentication."; got != want {
		t.Errorf("second handshake: %q, want %q", got, want)
	}

	s = newTestSession(t)
	if got, want := message(s.Handshake("GSSAPI")), "Unsupported SASL mechanism GSSAPI"; got != want {
		t.Errorf("unsupported: %q, want %q", got, want)
	}
	s = newTestSession(t)
	long := strings.Repeat("é", 100)
	if got := message(s.Handshake(long)); len(got) > 100 || !strings.HasPrefix(got, "Unsupported SASL mechanism éé") || !strings.HasSuffix(got, "é...") {
		t.Errorf("long mechanism name not clipped at a rune boundary: %q", got)
	}
	s = newTestSession(t)
	odd := "a" + long // byte 64 is now inside an "é"
	if got := message(s.Handshake(odd)); !utf8.ValidString(got) || !strings.HasSuffix(got, "é...") {
		t.Errorf("long mechanism name cut inside a rune: %q", got)
	}

	s = newTestSession(t)
	s.Handshake(Plain)
	if _, err := s.Authenticate([]byte(alicePlain)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Authenticate([]byte(alicePlain))
	if got, want := message(err), "SaslAuthenticate request received after successful authentication"; got != want {
		t.Errorf("authenticate after success: %q, want %q", got, want)
	}
	if got, want := message(s.Handshake(Plain)), "SaslHandshake request received after successful authentication"; got != want {
		t.Errorf("handshake after success: %q, want %q", got, want)
	}
}

// TestSessionAccessors walks a SCRAM exchange and checks every accessor
// after every step.
func TestSessionAccessors(t *testing.T) {
	s := newTestSession(t)
	check := func(step string, pending, authenticated bool, user string) {
		t.Helper()
		principal := ""
		if user != "" {
			principal = "User:" + user
		}
		if s.Pending() != pending || s.Authenticated() != authenticated || s.User() != user || s.Principal() != principal {
			t.Errorf("%s: Pending %v, Authenticated %v, User %q, Principal %q; want %v, %v, %q, %q",
				step, s.Pending(), s.Authenticated(), s.User(), s.Principal(), pending, authenticated, user, principal)
		}
	}
	check("new", false, false, "")
	if s.Mechanism() != "" {
		t.Errorf("Mechanism before the handshake = %q", s.Mechanism())
	}
	if !slices.Equal(s.Mechanisms(), allMechanisms()) {
		t.Errorf("Mechanisms = %v", s.Mechanisms())
	}
	if err := s.Handshake(ScramSHA256); err != nil {
		t.Fatal(err)
	}
	check("handshake", true, false, "")
	if s.Mechanism() != ScramSHA256 {
		t.Errorf("Mechanism = %q, want %s", s.Mechanism(), ScramSHA256)
	}
	first := "n,,n=a=2Cb=3Dc,r=nonce"
	serverFirst, err := s.Authenticate([]byte(first))
	if err != nil {
		t.Fatal(err)
	}
	check("client-first", true, false, "")
	x := newScramCtx(t, ScramSHA256, first, string(serverFirst), "pw-escaped")
	if _, err := s.Authenticate([]byte(x.sign(validWithoutProof(x)))); err != nil {
		t.Fatal(err)
	}
	check("client-final", false, true, "a,b=c")
	if s.exchange != nil {
		t.Error("the exchange (and its credential) outlives the authentication")
	}
}

func TestMechanismsIsACopy(t *testing.T) {
	cfg := &Config{Mechanisms: []string{ScramSHA512, Plain}, Credentials: fixtureCredentials()}
	s := NewSession(cfg)
	got := s.Mechanisms()
	if !slices.Equal(got, []string{ScramSHA512, Plain}) {
		t.Fatalf("Mechanisms = %v, want the configured order", got)
	}
	got[0] = "GSSAPI"
	if cfg.Mechanisms[0] != ScramSHA512 || s.Mechanisms()[0] != ScramSHA512 {
		t.Error("modifying Mechanisms' result changed the Config")
	}
}

// TestOneLookupPerAuthentication pins the Credentials contract.
func TestOneLookupPerAuthentication(t *testing.T) {
	creds := &countingCredentials{Credentials: fixtureCredentials()}
	cfg := &Config{Mechanisms: allMechanisms(), Credentials: creds}

	s := NewSession(cfg)
	s.Handshake(Plain)
	if _, err := s.Authenticate([]byte(alicePlain)); err != nil {
		t.Fatal(err)
	}
	s = NewSession(cfg)
	s.Handshake(ScramSHA256)
	serverFirst, err := s.Authenticate([]byte(validFirst))
	if err != nil {
		t.Fatal(err)
	}
	x := newScramCtx(t, ScramSHA256, validFirst, string(serverFirst), "pencil")
	if _, err := s.Authenticate([]byte(x.sign(validWithoutProof(x)))); err != nil {
		t.Fatal(err)
	}
	if n := creds.lookups.Load(); n != 2 {
		t.Errorf("%d lookups for two authentications, want 2", n)
	}
}

func TestConfigValidate(t *testing.T) {
	creds := fixtureCredentials()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // substring of the error; "" is valid
	}{
		{name: "all three", cfg: Config{Mechanisms: allMechanisms(), Credentials: creds}},
		{name: "one", cfg: Config{Mechanisms: []string{ScramSHA512}, Credentials: creds}},
		{name: "no mechanisms", cfg: Config{Credentials: creds}, want: "no mechanisms"},
		{name: "empty mechanisms", cfg: Config{Mechanisms: []string{}, Credentials: creds}, want: "no mechanisms"},
		{name: "unknown mechanism", cfg: Config{Mechanisms: []string{Plain, "GSSAPI"}, Credentials: creds}, want: `unknown mechanism "GSSAPI"`},
		{name: "lower-case mechanism", cfg: Config{Mechanisms: []string{"scram-sha-256"}, Credentials: creds}, want: "unknown mechanism"},
		{name: "duplicate mechanism", cfg: Config{Mechanisms: []string{Plain, ScramSHA256, Plain}, Credentials: creds}, want: "PLAIN enabled twice"},
		{name: "nil credentials", cfg: Config{Mechanisms: []string{Plain}}, want: "nil Credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestProgrammerErrorsPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"nil config", func() { NewSession(nil) }},
		{"invalid config", func() { NewSession(&Config{}) }},
		{"zero session handshake", func() { new(Session).Handshake(Plain) }},
		{"zero session authenticate", func() { new(Session).Authenticate(nil) }},
		{"zero session accessors", func() { new(Session).Authenticated() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.f()
		})
	}
}

func TestValidTransition(t *testing.T) {
	states := []sessionState{stateAwaitHandshake, stateExchanging, stateAuthenticated, stateFailed}
	want := map[[2]sessionState]bool{
		{stateAwaitHandshake, stateExchanging}: true,
		{stateAwaitHandshake, stateFailed}:     true,
		{stateExchanging, stateAuthenticated}:  true,
		{stateExchanging, stateFailed}:         true,
		{stateAuthenticated, stateExchanging}:  true,
		{stateAuthenticated, stateFailed}:      true,
	}
	for _, from := range states {
		for _, to := range append(states, 0) {
			if got := validTransition(from, to); got != want[[2]sessionState{from, to}] {
				t.Errorf("validTransition(%v, %v) = %v", from, to, got)
			}
		}
	}
}

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Code: CodeAuthenticationFailed, Message: "m"}, "sasl: SASL_AUTHENTICATION_FAILED: m"},
		{&Error{Code: CodeIllegalState, Message: "m"}, "sasl: ILLEGAL_SASL_STATE: m"},
		{&Error{Code: CodeUnsupportedMechanism, Message: "m"}, "sasl: UNSUPPORTED_SASL_MECHANISM: m"},
		{&Error{Code: 7, Message: "m"}, "sasl: error code 7: m"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// TestRandFailure: a broken nonce source is operational, not the client's
// fault: the error is not a *sasl.Error, wraps the source's error and
// fails the session.
func TestRandFailure(t *testing.T) {
	boom := errors.New("boom")
	s := NewSession(&Config{Mechanisms: []string{ScramSHA256}, Credentials: fixtureCredentials(), Rand: io.MultiReader(bytes.NewReader([]byte{1, 2}), errReader{boom})})
	s.Handshake(ScramSHA256)
	_, err := s.Authenticate([]byte(validFirst))
	var e *Error
	if err == nil || errors.As(err, &e) || !errors.Is(err, boom) {
		t.Fatalf("Authenticate = %v, want an operational error wrapping %v", err, boom)
	}
	if _, err := s.Authenticate([]byte(validFirst)); code(t, err) != CodeIllegalState {
		t.Errorf("after a nonce failure: %v, want ILLEGAL_SASL_STATE", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
