// Package testpki issues throwaway certificates for tests: a certificate
// authority, a server certificate for 127.0.0.1 and a client certificate,
// all signed by that CA, in PEM and as crypto/tls values. Only tests import
// it.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// PKI is one CA and the certificates it issued.
type PKI struct {
	CAPEM         []byte // the CA certificate
	ServerCertPEM []byte // the server certificate (for 127.0.0.1)
	ServerKeyPEM  []byte // its PKCS#8 private key, unencrypted
	Server        tls.Certificate
	Client        tls.Certificate // CN=client, for client authentication
	Pool          *x509.CertPool  // holds the CA
	ca            *authority
}

// New issues a CA and its server and client certificates, valid for a day.
func New() (*PKI, error) {
	ca, err := newCA("strata test CA")
	if err != nil {
		return nil, err
	}
	server, err := ca.issue("127.0.0.1", x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	client, err := ca.issue("client", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	p := &PKI{CAPEM: pemBlock("CERTIFICATE", ca.der), ServerCertPEM: server.certPEM, ServerKeyPEM: server.keyPEM, Pool: x509.NewCertPool(), ca: ca}
	p.Pool.AddCert(ca.cert)
	if p.Server, err = tls.X509KeyPair(server.certPEM, server.keyPEM); err != nil {
		return nil, err
	}
	if p.Client, err = tls.X509KeyPair(client.certPEM, client.keyPEM); err != nil {
		return nil, err
	}
	return p, nil
}

// IssueServer issues another server certificate from p's CA, for name
// (an IP address is also its subject alternative name), and returns its
// certificate and key as one PEM keystore: a renewal when name is
// 127.0.0.1, a certificate for another host otherwise.
func (p *PKI) IssueServer(name string) ([]byte, error) {
	l, err := p.ca.issue(name, x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	return append(l.certPEM, l.keyPEM...), nil
}

// Stranger is a client certificate issued by another, unknown CA.
func Stranger() (tls.Certificate, error) {
	ca, err := newCA("someone else's CA")
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := ca.issue("mallory", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(leaf.certPEM, leaf.keyPEM)
}

type authority struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	der  []byte
}

type leaf struct{ certPEM, keyPEM []byte }

func newCA(name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{key: key, cert: cert, der: der}, nil
}

// issue signs a certificate for name (an IP address is also its SAN).
func (a *authority) issue(name string, usage x509.ExtKeyUsage) (leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return leaf{}, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return leaf{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return leaf{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return leaf{}, err
	}
	return leaf{certPEM: pemBlock("CERTIFICATE", der), keyPEM: pemBlock("PRIVATE KEY", keyDER)}, nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
