package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/testpki"
)

// serverPEM returns a PEM certificate and key for 127.0.0.1, issued by a
// throwaway CA.
func serverPEM(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	return string(pki.ServerCertPEM), string(pki.ServerKeyPEM)
}

func TestTLSConfigFromFilesAndInline(t *testing.T) {
	cert, key := serverPEM(t)
	dir := t.TempDir()
	keystore := filepath.Join(dir, "keystore.pem")
	ca := filepath.Join(dir, "ca.pem")
	for path, data := range map[string]string{keystore: cert + key, ca: cert} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	protocols := []string{"TLSv1.2", "TLSv1.3"}
	tests := []struct {
		name    string
		cfg     config.TLSConfig
		want    tls.ClientAuthType
		wantCAs bool
	}{
		{"file, no client auth", config.TLSConfig{KeystoreLocation: keystore, ClientAuth: "none", Protocols: protocols}, tls.NoClientCert, false},
		{"file, required", config.TLSConfig{KeystoreLocation: keystore, TruststoreLocation: ca, ClientAuth: "required", Protocols: protocols}, tls.RequireAndVerifyClientCert, true},
		{"inline, requested", config.TLSConfig{KeystoreChain: cert, KeystoreKey: key, TruststoreCertificates: cert, ClientAuth: "requested", Protocols: protocols}, tls.VerifyClientCertIfGiven, true},
		// Inline certificates are PEM whatever type a truststore password implies.
		{"inline truststore, JKS implied", config.TLSConfig{KeystoreLocation: keystore, TruststoreCertificates: cert, TruststoreType: config.StoreJKS,
			TruststorePassword: "changeit", ClientAuth: "required", Protocols: protocols}, tls.RequireAndVerifyClientCert, true},
		// A properties file may fold inline PEM onto one line.
		{"inline folded onto one line", config.TLSConfig{KeystoreChain: fold(cert), KeystoreKey: fold(key), ClientAuth: "none", Protocols: protocols}, tls.NoClientCert, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tlsConfig(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Certificates) != 1 || got.ClientAuth != tt.want || (got.ClientCAs != nil) != tt.wantCAs {
				t.Fatalf("certificates %d, client auth %v, CAs %v", len(got.Certificates), got.ClientAuth, got.ClientCAs != nil)
			}
			if got.MinVersion != tls.VersionTLS12 || got.MaxVersion != tls.VersionTLS13 {
				t.Fatalf("versions %x..%x", got.MinVersion, got.MaxVersion)
			}
		})
	}
}

func fold(pemText string) string { return strings.ReplaceAll(strings.TrimSpace(pemText), "\n", " ") }

func TestTLSConfigErrorsNameTheConfig(t *testing.T) {
	cert, key := serverPEM(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("nothing here"), 0o600); err != nil {
		t.Fatal(err)
	}
	protocols := []string{"TLSv1.3"}
	tests := []struct {
		name string
		cfg  config.TLSConfig
		want string
	}{
		{"missing keystore file", config.TLSConfig{KeystoreLocation: filepath.Join(dir, "nope.pem"), Protocols: protocols}, "ssl.keystore.location"},
		{"garbage keystore", config.TLSConfig{KeystoreLocation: garbage, Protocols: protocols}, "ssl.keystore.location " + garbage},
		{"key without its chain", config.TLSConfig{KeystoreChain: "", KeystoreKey: key, Protocols: protocols}, "ssl.keystore.certificate.chain"},
		{"garbage truststore", config.TLSConfig{KeystoreChain: cert, KeystoreKey: key, TruststoreLocation: garbage, ClientAuth: "required", Protocols: protocols}, "ssl.truststore.location"},
		{"unknown cipher", config.TLSConfig{KeystoreChain: cert, KeystoreKey: key, Protocols: protocols, CipherSuites: []string{"TLS_NOPE"}}, "ssl.cipher.suites"},
		{"no protocols", config.TLSConfig{KeystoreChain: cert, KeystoreKey: key}, "ssl.enabled.protocols"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tlsConfig(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line naming %q", err, tt.want)
			}
		})
	}
}

func TestNormalizePEMKeepsProperPEM(t *testing.T) {
	cert, key := serverPEM(t)
	if got := string(normalizePEM(cert + key)); got != cert+key {
		t.Fatalf("normalizePEM changed well-formed PEM:\n%s", got)
	}
	if got := string(normalizePEM(fold(cert) + " " + fold(key))); got != cert+key {
		t.Fatalf("normalizePEM of folded PEM:\n%s\nwant\n%s", got, cert+key)
	}
}

// ssl.enabled.protocols, in any order, gives the range it spans.
func TestTLSVersions(t *testing.T) {
	for _, tc := range []struct {
		protocols []string
		lo, hi    uint16
		err       string
	}{
		{[]string{"TLSv1.3", "TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS13, ""},
		{[]string{"TLSv1.3"}, tls.VersionTLS13, tls.VersionTLS13, ""},
		{[]string{"TLSv1.2", "TLSv1.1"}, 0, 0, "TLSv1.1 is not supported"},
		{nil, 0, 0, "is empty"},
	} {
		lo, hi, err := tlsVersions(tc.protocols)
		if lo != tc.lo || hi != tc.hi || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("tlsVersions(%v) = %x, %x, %v; want %x, %x, an error with %q", tc.protocols, lo, hi, err, tc.lo, tc.hi, tc.err)
		}
	}
}

// ssl.cipher.suites takes IANA names; none leaves Go's defaults.
func TestCipherSuites(t *testing.T) {
	if got, err := cipherSuites(nil); got != nil || err != nil {
		t.Errorf("no suites: %v, %v; want Go's defaults (nil)", got, err)
	}
	got, err := cipherSuites([]string{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"})
	if want := []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}; err != nil || !slices.Equal(got, want) {
		t.Errorf("cipherSuites = %v, %v; want %v", got, err, want)
	}
	if _, err := cipherSuites([]string{"TLS_RSA_WITH_RC4_128_SHA"}); err == nil || !strings.Contains(err.Error(), "TLS_RSA_WITH_RC4_128_SHA is not a supported") {
		t.Errorf("an insecure suite: %v, want it refused", err)
	}
}

// A PEM file that happens to start with '0' (a DER SEQUENCE's first byte)
// is not taken for a PKCS12 store.
func TestStoreTypeHintKnowsPEMText(t *testing.T) {
	if got := storeTypeHint("keystore", []byte("0 comment\n-----BEGIN CERTIFICATE-----\n")); got != "" {
		t.Errorf("storeTypeHint of PEM text = %q, want none", got)
	}
	if got := storeTypeHint("keystore", []byte{0x30, 0x82}); !strings.Contains(got, "ssl.keystore.type=PKCS12") {
		t.Errorf("storeTypeHint of DER = %q, want the PKCS12 hint", got)
	}
}
