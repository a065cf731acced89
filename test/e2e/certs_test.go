package e2e

import (
	"crypto/tls"
	"path/filepath"
	"testing"

	"github.com/strata-broker/strata/internal/testpki"
)

// testPKI is a throwaway CA with a server certificate for 127.0.0.1 and a
// client certificate, the CA and the server's keystore written as PEM files.
type testPKI struct {
	*testpki.PKI
	CAFile       string // the CA certificate
	KeystoreFile string // server chain + key, as ssl.keystore.location takes it
}

// newTestPKI issues the certificates into dir.
func newTestPKI(t *testing.T, dir string) *testPKI {
	t.Helper()
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{PKI: pki, CAFile: filepath.Join(dir, "ca.pem"), KeystoreFile: filepath.Join(dir, "keystore.pem")}
	writeFile(t, p.CAFile, pki.CAPEM)
	writeFile(t, p.KeystoreFile, append(append([]byte{}, pki.ServerCertPEM...), pki.ServerKeyPEM...))
	return p
}

// clientTLS is a client configuration trusting the test CA, presenting the
// client certificate if withCert.
func (p *testPKI) clientTLS(withCert bool) *tls.Config {
	c := &tls.Config{RootCAs: p.Pool, MinVersion: tls.VersionTLS12}
	if withCert {
		c.Certificates = []tls.Certificate{p.Client}
	}
	return c
}

// strangerCert is a client certificate from another CA.
func strangerCert(t *testing.T) tls.Certificate {
	t.Helper()
	c, err := testpki.Stranger()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
