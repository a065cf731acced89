package server

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/sasl"
	"github.com/strata-broker/strata/internal/testpki"
)

func TestSASLAllows(t *testing.T) {
	cfg := &sasl.Config{Mechanisms: []string{sasl.Plain}, Credentials: plainUsers{"alice": "pw"}}
	fresh := sasl.NewSession(cfg)
	pending := sasl.NewSession(cfg)
	if err := pending.Handshake(sasl.Plain); err != nil {
		t.Fatal(err)
	}
	done := sasl.NewSession(cfg)
	if err := done.Handshake(sasl.Plain); err != nil {
		t.Fatal(err)
	}
	if _, err := done.Authenticate([]byte("\x00alice\x00pw")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		session *sasl.Session
		key     int16
		want    bool
	}{
		{"no sasl, metadata", nil, 3, true},
		{"fresh, api versions", fresh, apiVersionsKey, true},
		{"fresh, handshake", fresh, saslHandshakeKey, true},
		{"fresh, authenticate", fresh, saslAuthenticateKey, false},
		{"fresh, metadata", fresh, 3, false},
		{"pending, authenticate", pending, saslAuthenticateKey, true},
		{"pending, api versions", pending, apiVersionsKey, false},
		{"pending, produce", pending, 0, false},
		{"authenticated, produce", done, 0, true},
	}
	for _, tt := range tests {
		if got := saslAllows(tt.session, tt.key); got != tt.want {
			t.Errorf("%s: saslAllows = %v, want %v", tt.name, got, tt.want)
		}
	}
}

type plainUsers map[string]string

func (p plainUsers) PlainPassword(user string) (string, bool) { pw, ok := p[user]; return pw, ok }
func (plainUsers) Scram(string, string) (sasl.ScramCredential, bool) {
	return sasl.ScramCredential{}, false
}

// saslHandler answers SaslHandshake and SaslAuthenticate from the
// connection's session, as the api package does, and everything else as
// fakeHandler.
func saslHandler() *fakeHandler {
	h := newFakeHandler()
	h.versions[saslHandshakeKey] = [2]int16{0, 1}
	h.versions[saslAuthenticateKey] = [2]int16{0, 2}
	h.handle = func(_ context.Context, req *Request) Reply {
		switch r := req.Body.(type) {
		case *kmsg.SASLHandshakeRequest:
			resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
			if err := req.Conn.SASL.Handshake(r.Mechanism); err != nil {
				resp.ErrorCode = err.(*sasl.Error).Code
				return Reply{Resp: resp, Close: true}
			}
			return Reply{Resp: resp}
		case *kmsg.SASLAuthenticateRequest:
			resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
			token, err := req.Conn.SASL.Authenticate(r.SASLAuthBytes)
			if err != nil {
				resp.ErrorCode = err.(*sasl.Error).Code
				return Reply{Resp: resp, Close: true}
			}
			resp.SASLAuthBytes = token
			return Reply{Resp: resp}
		}
		return Reply{Resp: h.answer(req)}
	}
	return h
}

func startSASLServer(t *testing.T) *Server {
	t.Helper()
	return startServer(t, saslHandler(), func(o *Options) {
		o.SASL = &sasl.Config{Mechanisms: []string{sasl.Plain}, Credentials: plainUsers{"alice": "pw"}}
	})
}

func TestSASLGateBeforeAuthentication(t *testing.T) {
	s := startSASLServer(t)

	c := dial(t, s)
	c.send(kmsg.NewPtrMetadataRequest(), 9, 1)
	c.expectClosed()

	c = dial(t, s)
	c.send(kmsg.NewPtrSASLAuthenticateRequest(), 1, 1) // before any handshake
	c.expectClosed()

	c = dial(t, s)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = sasl.Plain
	c.send(hs, 1, 1)
	c.read(saslHandshakeKey, 1, 1)
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, 2) // only SaslAuthenticate now
	c.expectClosed()

	// A stranger may not make the broker allocate more than 512 KiB.
	c = dial(t, s)
	c.write(binary.BigEndian.AppendUint32(nil, maxUnauthenticatedBytes+1))
	c.expectClosed()
	apiVersionsOK(t, s)
}

func TestSASLHandshakeV1ThenRequests(t *testing.T) {
	s := startSASLServer(t)
	c := dial(t, s)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = sasl.Plain
	c.send(hs, 1, 1)
	if resp := c.read(saslHandshakeKey, 1, 1).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		t.Fatalf("handshake error %d", resp.ErrorCode)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SASLAuthBytes = []byte("\x00alice\x00pw")
	c.send(auth, 2, 2)
	if resp := c.read(saslAuthenticateKey, 2, 2).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != 0 {
		t.Fatalf("authenticate error %d", resp.ErrorCode)
	}
	c.send(kmsg.NewPtrMetadataRequest(), 9, 3)
	c.read(3, 9, 3)

	c = dial(t, s)
	c.send(hs, 1, 1)
	c.read(saslHandshakeKey, 1, 1)
	auth.SASLAuthBytes = []byte("\x00alice\x00wrong")
	c.send(auth, 2, 2)
	if resp := c.read(saslAuthenticateKey, 2, 2).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != sasl.CodeAuthenticationFailed {
		t.Fatalf("wrong password: error %d", resp.ErrorCode)
	}
	c.expectClosed()
}

// TestSASLHandshakeV0BareTokens: after SaslHandshake v0 the client sends
// the SASL exchange as bare size-prefixed tokens, not Kafka requests.
func TestSASLHandshakeV0BareTokens(t *testing.T) {
	s := startSASLServer(t)
	c := dial(t, s)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = sasl.Plain
	c.send(hs, 0, 1)
	c.read(saslHandshakeKey, 0, 1)
	c.write(rawFrame([]byte("\x00alice\x00pw")))
	if token := c.readRawToken(); len(token) != 0 {
		t.Fatalf("PLAIN's final token is %q, want empty", token)
	}
	c.send(kmsg.NewPtrMetadataRequest(), 9, 2)
	c.read(3, 9, 2)

	c = dial(t, s)
	c.send(hs, 0, 1)
	c.read(saslHandshakeKey, 0, 1)
	c.write(rawFrame([]byte("\x00alice\x00wrong")))
	c.expectClosed()
}

func (c *client) readRawToken() []byte {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(testTimeout))
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		c.t.Fatal(err)
	}
	token := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.nc, token); err != nil {
		c.t.Fatal(err)
	}
	return token
}

func TestTLSListener(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, newFakeHandler(), func(o *Options) {
		o.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Server}, MinVersion: tls.VersionTLS12}
	})
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", s.Addr().String(), &tls.Config{RootCAs: pki.Pool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &client{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("test"))}
	c.send(kmsg.NewPtrApiVersionsRequest(), 3, 5)
	c.read(apiVersionsKey, 3, 5)

	plain := dial(t, s) // a client that does not speak TLS
	plain.send(kmsg.NewPtrApiVersionsRequest(), 3, 5)
	plain.expectClosed()
}

// principalHandler records the principal of each request it handles.
func principalHandler(seen chan<- string) *fakeHandler {
	h := saslHandler()
	inner := h.handle
	h.handle = func(ctx context.Context, req *Request) Reply {
		if req.Key == 3 {
			seen <- req.Conn.Principal()
		}
		return inner(ctx, req)
	}
	return h
}

func TestPrincipal(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1)
	metadata := func(c *client) string {
		t.Helper()
		c.send(kmsg.NewPtrMetadataRequest(), 9, 9)
		c.read(3, 9, 9)
		return <-seen
	}

	plain := startServer(t, principalHandler(seen), nil)
	if got := metadata(dial(t, plain)); got != Anonymous {
		t.Errorf("plaintext principal %q, want %q", got, Anonymous)
	}

	tlsSrv := startServer(t, principalHandler(seen), func(o *Options) {
		o.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Server}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pki.Pool}
	})
	for _, tt := range []struct {
		name  string
		certs []tls.Certificate
		want  string
	}{
		{"no client certificate", nil, Anonymous},
		{"client certificate", []tls.Certificate{pki.Client}, "User:CN=client"},
	} {
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", tlsSrv.Addr().String(), &tls.Config{RootCAs: pki.Pool, Certificates: tt.certs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		c := &client{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("test"))}
		if got := metadata(c); got != tt.want {
			t.Errorf("%s: principal %q, want %q", tt.name, got, tt.want)
		}
	}

	saslSrv := startServer(t, principalHandler(seen), func(o *Options) {
		o.SASL = &sasl.Config{Mechanisms: []string{sasl.Plain}, Credentials: plainUsers{"alice": "pw"}}
	})
	c := dial(t, saslSrv)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = sasl.Plain
	c.send(hs, 1, 1)
	c.read(saslHandshakeKey, 1, 1)
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SASLAuthBytes = []byte("\x00alice\x00pw")
	c.send(auth, 2, 2)
	c.read(saslAuthenticateKey, 2, 2)
	if got := metadata(c); got != "User:alice" {
		t.Errorf("SASL principal %q, want User:alice", got)
	}
}

// countingAuths records observed authentications.
type countingAuths struct {
	mu   sync.Mutex
	seen []string
}

func (a *countingAuths) Observe(listener, mechanism string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, fmt.Sprintf("%s/%s/%v", listener, mechanism, ok))
}

func (a *countingAuths) get() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// TestSASLFailureIsDelayedAndCounted: a failed authentication is answered
// only after FailedAuthenticationDelay (KIP-306), and every outcome, v0
// and v1, is reported.
func TestSASLFailureIsDelayedAndCounted(t *testing.T) {
	const delay = 300 * time.Millisecond
	auths := &countingAuths{}
	s := startServer(t, saslHandler(), func(o *Options) {
		o.SASL = &sasl.Config{Mechanisms: []string{sasl.Plain}, Credentials: plainUsers{"alice": "pw"}}
		o.ListenerName, o.FailedAuthenticationDelay, o.Authentications = "SASL_PLAINTEXT", delay, auths
	})
	authenticate := func(version int16, password string) time.Duration {
		c := dial(t, s)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Mechanism = sasl.Plain
		c.send(hs, version, 1)
		c.read(saslHandshakeKey, version, 1)
		start := time.Now()
		token := []byte("\x00alice\x00" + password)
		if version == 0 {
			c.write(rawFrame(token))
		} else {
			auth := kmsg.NewPtrSASLAuthenticateRequest()
			auth.SASLAuthBytes = token
			c.send(auth, 1, 2)
		}
		if password == "pw" {
			if version == 0 {
				c.readRawToken()
			} else {
				c.read(saslAuthenticateKey, 1, 2)
			}
		} else {
			if version == 1 {
				c.read(saslAuthenticateKey, 1, 2)
			}
			c.expectClosed()
		}
		return time.Since(start)
	}
	authenticate(1, "pw")
	if took := authenticate(1, "wrong"); took < delay {
		t.Errorf("a failed authentication was answered after %v, want at least %v", took, delay)
	}
	if took := authenticate(0, "wrong"); took < delay {
		t.Errorf("a failed v0 authentication was closed after %v, want at least %v", took, delay)
	}
	authenticate(0, "pw")
	want := []string{"SASL_PLAINTEXT/PLAIN/true", "SASL_PLAINTEXT/PLAIN/false", "SASL_PLAINTEXT/PLAIN/false", "SASL_PLAINTEXT/PLAIN/true"}
	if got := auths.get(); !slices.Equal(got, want) {
		t.Errorf("observed %v, want %v", got, want)
	}
}

// TestCertificateMapping: MapCertificate names the principal of a client
// certificate, and a subject it refuses closes the connection.
func TestCertificateMapping(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1)
	for _, tt := range []struct {
		name   string
		mapped string
		ok     bool
	}{{"mapped", "client-app", true}, {"refused", "", false}} {
		srv := startServer(t, principalHandler(seen), func(o *Options) {
			o.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.Pool}
			o.MapCertificate = func(subject string) (string, bool) {
				if subject != "CN=client" {
					t.Errorf("subject %q", subject)
				}
				return tt.mapped, tt.ok
			}
		})
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", srv.Addr().String(),
			&tls.Config{RootCAs: pki.Pool, Certificates: []tls.Certificate{pki.Client}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		c := &client{t: t, nc: nc, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("test"))}
		c.send(kmsg.NewPtrMetadataRequest(), 9, 9)
		if !tt.ok {
			c.expectClosed()
			continue
		}
		c.read(3, 9, 9)
		if got := <-seen; got != "User:client-app" {
			t.Errorf("%s: principal %q, want User:client-app", tt.name, got)
		}
	}
}

// TestSessionLifetime: with MaxReauth the client learns the session's
// lifetime, may re-authenticate on the same connection, and a request after
// the lifetime without re-authentication closes it (KIP-368).
func TestSessionLifetime(t *testing.T) {
	// Generous margins: every wait below is a second from any edge.
	const lifetime = 2 * time.Second
	s := startServer(t, saslHandler(), func(o *Options) {
		o.SASL = &sasl.Config{Mechanisms: []string{sasl.Plain}, Credentials: plainUsers{"alice": "pw", "bob": "pw"}, Reauthenticate: true}
		o.MaxReauth = lifetime
	})
	authenticate := func(c *client, user string, corr int32) *kmsg.SASLAuthenticateResponse {
		t.Helper()
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Mechanism = sasl.Plain
		c.send(hs, 1, corr)
		c.read(saslHandshakeKey, 1, corr)
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.SASLAuthBytes = []byte("\x00" + user + "\x00pw")
		c.send(auth, 2, corr+1)
		return c.read(saslAuthenticateKey, 2, corr+1).(*kmsg.SASLAuthenticateResponse)
	}

	c := dial(t, s)
	if resp := authenticate(c, "alice", 1); resp.ErrorCode != 0 || resp.SessionLifetimeMillis != lifetime.Milliseconds() {
		t.Fatalf("first authentication: error %d, lifetime %d ms", resp.ErrorCode, resp.SessionLifetimeMillis)
	}
	c.send(kmsg.NewPtrMetadataRequest(), 9, 3)
	c.read(3, 9, 3)
	time.Sleep(lifetime / 2)
	if resp := authenticate(c, "alice", 4); resp.ErrorCode != 0 { // re-authentication, in time
		t.Fatalf("re-authentication: error %d", resp.ErrorCode)
	}
	time.Sleep(lifetime / 2)
	c.send(kmsg.NewPtrMetadataRequest(), 9, 6) // within the renewed lifetime
	c.read(3, 9, 6)
	time.Sleep(lifetime/2 + time.Second)
	c.send(kmsg.NewPtrMetadataRequest(), 9, 7) // expired
	c.expectClosed()

	// Re-authenticating as someone else fails and closes the connection.
	c = dial(t, s)
	authenticate(c, "alice", 1)
	if resp := authenticate(c, "bob", 3); resp.ErrorCode != sasl.CodeAuthenticationFailed {
		t.Fatalf("re-authentication as bob: error %d", resp.ErrorCode)
	}
	c.expectClosed()
}

func TestSessionLifetimeOfACredential(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name      string
		maxReauth time.Duration
		expiry    time.Time
		want      time.Duration
	}{
		{"a password, no re-authentication", 0, time.Time{}, 0},
		{"a token, no re-authentication", 0, now.Add(time.Minute), time.Minute},
		{"an expired token, no re-authentication", 0, now.Add(-time.Second), time.Millisecond},
		{"a password", time.Hour, time.Time{}, time.Hour},
		{"a token outliving it", time.Minute, now.Add(time.Hour), time.Minute},
		{"a token expiring first", time.Hour, now.Add(time.Minute), time.Minute},
		{"an expired token", time.Hour, now.Add(-time.Second), time.Millisecond},
	} {
		if got := sessionLifetime(tc.maxReauth, tc.expiry, now); got != tc.want {
			t.Errorf("%s: sessionLifetime = %v, want %v", tc.name, got, tc.want)
		}
	}
}
