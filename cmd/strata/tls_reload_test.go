package main

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/testpki"
)

func TestCompatibleCertificates(t *testing.T) {
	cert := func(cn string, dns ...string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn}, DNSNames: dns, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}
	}
	tests := []struct {
		name              string
		old, next         *x509.Certificate
		allowDN, allowSAN bool
		wantErr           string
	}{
		{"renewal", cert("b1", "b1.example"), cert("b1", "b1.example"), false, false, ""},
		{"names added", cert("b1", "b1.example"), cert("b1", "b1.example", "kafka.example"), false, false, ""},
		{"subject changed", cert("b1", "b1.example"), cert("b2", "b1.example"), false, false, "ssl.allow.dn.changes"},
		{"subject changed, allowed", cert("b1", "b1.example"), cert("b2", "b1.example"), true, false, ""},
		{"name dropped", cert("b1", "b1.example", "old.example"), cert("b1", "b1.example"), false, false, "DNS:old.example"},
		{"name dropped, allowed", cert("b1", "b1.example", "old.example"), cert("b1", "b1.example"), false, true, ""},
		{"address dropped", cert("b1"), &x509.Certificate{Subject: pkix.Name{CommonName: "b1"}}, false, false, "IP:10.0.0.1"},
		{"email and URI dropped", &x509.Certificate{Subject: pkix.Name{CommonName: "b1"}, EmailAddresses: []string{"ops@b1.example"},
			URIs: []*url.URL{{Scheme: "spiffe", Host: "b1"}}}, cert("b1"), false, false, "email:ops@b1.example, URI:spiffe://b1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := compatibleCertificates(tt.old, tt.next, tt.allowDN, tt.allowSAN)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

// tlsReloadFixture is a listener set with one listener, SSL, whose
// keystore is a file the test rewrites.
type tlsReloadFixture struct {
	pki      *testpki.PKI
	dir      string
	set      *listenerTLSSet
	settings config.TLSConfig
	server   *tls.Config
}

func newTLSReloadFixture(t *testing.T) *tlsReloadFixture {
	t.Helper()
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	f := &tlsReloadFixture{pki: pki, dir: t.TempDir(), set: newListenerTLSSet(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	f.settings = config.TLSConfig{KeystoreLocation: f.write(t, "a.pem", append(append([]byte{}, pki.ServerCertPEM...), pki.ServerKeyPEM...)),
		ClientAuth: "none", Protocols: []string{"TLSv1.2", "TLSv1.3"}}
	if f.server, err = f.set.add("SSL", false, f.settings, f.settings); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *tlsReloadFixture) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (f *tlsReloadFixture) issue(t *testing.T, name string) []byte {
	t.Helper()
	pem, err := f.pki.IssueServer(name)
	if err != nil {
		t.Fatal(err)
	}
	return pem
}

// served is the serial number of the certificate a new connection gets.
func (f *tlsReloadFixture) served(t *testing.T) string {
	t.Helper()
	c, err := f.server.GetConfigForClient(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Certificates[0].Leaf.SerialNumber.String()
}

// with is the settings with the keystore at path.
func (f *tlsReloadFixture) with(path string) config.TLSConfig {
	s := f.settings
	s.KeystoreLocation = path
	return s
}

func TestListenerTLSReloadsRenewedKeystore(t *testing.T) {
	f := newTLSReloadFixture(t)
	first := f.served(t)
	renewed := f.write(t, "b.pem", f.issue(t, "127.0.0.1"))
	if _, err := f.set.listeners["SSL"].next(f.with(renewed)); err != nil {
		t.Fatalf("renewal refused: %v", err)
	}
	if f.served(t) != first {
		t.Fatal("a check changed the served certificate")
	}
	f.apply(t, f.with(renewed))
	second := f.served(t)
	if second == first {
		t.Fatal("the renewed keystore was not taken")
	}
	// The same path, its file rewritten in place: taken at the next look.
	f.write(t, "b.pem", f.issue(t, "127.0.0.1"))
	f.apply(t, f.with(renewed))
	if third := f.served(t); third == second {
		t.Fatal("a keystore rewritten in place was not reloaded")
	}
	// Nothing changed: nothing loaded.
	before := f.set.listeners["SSL"].cur.Load()
	f.apply(t, f.with(renewed))
	if f.set.listeners["SSL"].cur.Load() != before {
		t.Fatal("reloaded although neither settings nor file changed")
	}
}

func TestListenerTLSRefusesOtherSubjectAndBadFiles(t *testing.T) {
	f := newTLSReloadFixture(t)
	first := f.served(t)
	other := f.write(t, "other.pem", f.issue(t, "10.9.9.9"))
	broken := f.write(t, "broken.pem", []byte("not a keystore"))
	for _, path := range []string{other, broken, filepath.Join(f.dir, "missing.pem")} {
		_, err := f.set.listeners["SSL"].next(f.with(path))
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != "listener.name.ssl.ssl.keystore.location" {
			t.Fatalf("%s: err %v, want a config error on listener.name.ssl.ssl.keystore.location", path, err)
		}
		f.apply(t, f.with(path))
		if f.served(t) != first {
			t.Fatalf("%s was taken", path)
		}
	}
	allowed := f.with(other)
	allowed.AllowDNChanges, allowed.AllowSANChanges = true, true
	f.apply(t, allowed)
	if f.served(t) == first {
		t.Fatal("another subject was refused with ssl.allow.dn.changes and ssl.allow.san.changes")
	}
}

func TestListenerTLSStartsOnStaticWhenDynamicFails(t *testing.T) {
	f := newTLSReloadFixture(t)
	missing := f.with(filepath.Join(f.dir, "missing.pem"))
	server, err := f.set.add("SSL2", false, missing, f.settings)
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	c, _ := server.GetConfigForClient(&tls.ClientHelloInfo{})
	if len(c.Certificates) != 1 {
		t.Fatal("no certificate")
	}
	if _, err := f.set.add("SSL3", false, missing, missing); err == nil {
		t.Fatal("a listener started without a usable keystore")
	}
	// A static keystore deleted after a renewal does not keep the
	// listener from starting on the dynamic one.
	if _, err := f.set.add("SSL4", false, f.settings, missing); err != nil {
		t.Fatalf("a listener with a usable dynamic keystore and a deleted static one: %v", err)
	}
	// Other dynamic changes are not refused for the keystore that already
	// failed; a change to another bad one is.
	only := func(name string, s config.TLSConfig) func(string) config.TLSConfig {
		return func(l string) config.TLSConfig {
			if l == name {
				return s
			}
			return f.settings
		}
	}
	if err := f.set.checkSettings(only("SSL2", missing)); err != nil {
		t.Fatalf("a change leaving the failed keystore as it was: %v", err)
	}
	if err := f.set.checkSettings(only("SSL2", f.with(filepath.Join(f.dir, "other-missing.pem")))); err == nil {
		t.Fatal("a change to another unreadable keystore was accepted")
	}
	// The failed keystore's path, holding another unusable file by now, is
	// checked again.
	f.write(t, "missing.pem", []byte("garbage"))
	if err := f.set.checkSettings(only("SSL2", missing)); err == nil {
		t.Fatal("the failed keystore, replaced by another unusable file, was accepted")
	}
}

// apply runs the set's apply with settings s for every listener.
func (f *tlsReloadFixture) apply(t *testing.T, s config.TLSConfig) {
	t.Helper()
	f.set.apply(func(string) config.TLSConfig { return s })
}

// A change that apply could not take does not fail the check of other
// changes while it stays as it was, and fails it again once the listener
// has taken another.
func TestListenerTLSCheckSparesTheSettingsApplyRefused(t *testing.T) {
	f := newTLSReloadFixture(t)
	bad := f.with(filepath.Join(f.dir, "missing.pem"))
	f.apply(t, bad)
	if err := f.set.checkSettings(func(string) config.TLSConfig { return bad }); err != nil {
		t.Fatalf("the settings apply refused, unchanged: %v", err)
	}
	f.apply(t, f.settings)
	if err := f.set.checkSettings(func(string) config.TLSConfig { return bad }); err == nil {
		t.Fatal("a change back to unusable settings was accepted")
	}
}

// TestListenerTLSReloadsTruststore: a listener that asks for client
// certificates takes the CAs of a new truststore file.
func TestListenerTLSReloadsTruststore(t *testing.T) {
	f := newTLSReloadFixture(t)
	other, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	s := f.settings
	s.ClientAuth = "required"
	s.TruststoreLocation = f.write(t, "ca.pem", f.pki.CAPEM)
	f.apply(t, s)
	before := f.set.listeners["SSL"].cur.Load().config.ClientCAs
	if before == nil {
		t.Fatal("no client CAs")
	}
	s.TruststoreLocation = f.write(t, "ca2.pem", append(append([]byte{}, f.pki.CAPEM...), other.CAPEM...))
	f.apply(t, s)
	after := f.set.listeners["SSL"].cur.Load().config.ClientCAs
	if after == nil || after.Equal(before) {
		t.Fatal("the new truststore was not taken")
	}
}

func TestListenerTLSNamesTheStoreThatFails(t *testing.T) {
	f := newTLSReloadFixture(t)
	truststoreFile, truststoreInline, keystoreInline := f.settings, f.settings, f.settings
	truststoreFile.ClientAuth = "required"
	truststoreFile.TruststoreLocation = f.write(t, "empty-ca.pem", []byte("no certificates"))
	truststoreInline.ClientAuth, truststoreInline.TruststoreCertificates = "required", "no certificates"
	keystoreInline.KeystoreLocation, keystoreInline.KeystoreChain, keystoreInline.KeystoreKey = "", "no chain", "no key"
	for _, tc := range []struct {
		settings   config.TLSConfig
		key, value string
	}{
		{truststoreFile, "listener.name.ssl.ssl.truststore.location", truststoreFile.TruststoreLocation},
		{truststoreInline, "listener.name.ssl.ssl.truststore.certificates", "(inline PEM)"},
		{keystoreInline, "listener.name.ssl.ssl.keystore.key", "(inline PEM)"},
	} {
		_, err := f.set.listeners["SSL"].next(tc.settings)
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != tc.key || ce.Value != tc.value {
			t.Errorf("err %v, want a config error on %s=%s", err, tc.key, tc.value)
		}
	}
}

// TestListenerTLSInterBrokerChainsToTruststore: the inter-broker listener
// takes no certificate the other brokers would refuse.
func TestListenerTLSInterBrokerChainsToTruststore(t *testing.T) {
	f := newTLSReloadFixture(t)
	s := f.settings
	s.TruststoreLocation = f.write(t, "ca.pem", f.pki.CAPEM)
	if _, err := f.set.add("INTERNAL", true, s, s); err != nil {
		t.Fatal(err)
	}
	l := f.set.listeners["INTERNAL"]
	renewed := s
	renewed.KeystoreLocation = f.write(t, "renewed.pem", f.issue(t, "127.0.0.1"))
	if _, err := l.next(renewed); err != nil {
		t.Fatalf("a renewal from the trusted CA: %v", err)
	}
	start := &tls.Config{}
	client := f.set.clientConfig("INTERNAL", start)
	if c := client(); c == start || c.RootCAs == nil || len(c.Certificates) != 1 {
		t.Fatalf("client config %+v: want the listener's, with its truststore and certificate", c)
	}
	f.set.apply(func(name string) config.TLSConfig {
		if name == "INTERNAL" {
			return renewed
		}
		return f.settings
	})
	if got, want := client().Certificates[0].Leaf.SerialNumber, l.cur.Load().config.Certificates[0].Leaf.SerialNumber; got.Cmp(want) != 0 {
		t.Fatalf("replica clients present %v after the renewal, the listener serves %v", got, want)
	}
	if f.set.clientConfig("SSL", start)() != start {
		t.Fatal("a client config built for a listener that is not the inter-broker one")
	}
	other, err := testpki.New() // another CA, same subject
	if err != nil {
		t.Fatal(err)
	}
	foreign := s
	foreign.KeystoreLocation = f.write(t, "foreign.pem", append(append([]byte{}, other.ServerCertPEM...), other.ServerKeyPEM...))
	if _, err := l.next(foreign); err == nil || !strings.Contains(err.Error(), "truststore") {
		t.Fatalf("err %v, want a refusal naming the truststore", err)
	}
	if _, err := f.set.listeners["SSL"].next(foreign); err != nil {
		t.Fatalf("a client listener refused another CA's certificate: %v", err)
	}
	// A certificate of the trusted CA for client authentication only is
	// no server's, whatever names it may change.
	clientKey, err := x509.MarshalPKCS8PrivateKey(f.pki.Client.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	clientOnly := s
	clientOnly.AllowDNChanges, clientOnly.AllowSANChanges = true, true
	clientOnly.KeystoreLocation = f.write(t, "client.pem", append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.pki.Client.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: clientKey})...))
	if _, err := l.next(clientOnly); err == nil || !strings.Contains(err.Error(), "truststore") {
		t.Fatalf("a client certificate: err %v, want a refusal naming the truststore", err)
	}
}
