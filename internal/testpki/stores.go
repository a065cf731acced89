package testpki

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Stores are p's server certificate and CA written as Kafka's PKCS12 and
// JKS keystores and truststores, all with one password.
type Stores struct {
	Password                   string
	ServerP12, ServerJKS       string // keystore: the server key, its certificate and the CA
	TrustP12, TrustJKS         string // truststore: the CA as a trusted entry
	ClientP12, ClientJKS       string // keystore of the client certificate, for a Java-like client
	caCert                     *x509.Certificate
	serverChain, clientChain   []*x509.Certificate
	serverKeyDER, clientKeyDER []byte
	serverKeyAny, clientKeyAny any
}

// WriteStores writes p's stores into dir with Go encoders (go-pkcs12 and
// keystore-go). The JKS keystore also holds the CA as a trusted entry
// ("caroot"), as Kafka's documentation makes it.
func (p *PKI) WriteStores(dir, password string) (*Stores, error) {
	s := &Stores{Password: password, caCert: p.ca.cert,
		ServerP12: filepath.Join(dir, "server.p12"), ServerJKS: filepath.Join(dir, "server.jks"),
		TrustP12: filepath.Join(dir, "truststore.p12"), TrustJKS: filepath.Join(dir, "truststore.jks"),
		ClientP12: filepath.Join(dir, "client.p12"), ClientJKS: filepath.Join(dir, "client.jks")}
	var err error
	if s.serverChain, s.serverKeyDER, s.serverKeyAny, err = chainOf(p.Server.Certificate, p.Server.PrivateKey, p.ca.cert); err != nil {
		return nil, err
	}
	if s.clientChain, s.clientKeyDER, s.clientKeyAny, err = chainOf(p.Client.Certificate, p.Client.PrivateKey, p.ca.cert); err != nil {
		return nil, err
	}
	for _, w := range []func() error{
		func() error { return writeP12(s.ServerP12, s.serverKeyAny, s.serverChain, password) },
		func() error { return writeP12(s.ClientP12, s.clientKeyAny, s.clientChain, password) },
		func() error {
			return writeJKS(s.ServerJKS, password, map[string][]*x509.Certificate{"localhost": s.serverChain},
				map[string][]byte{"localhost": s.serverKeyDER}, p.ca.cert)
		},
		func() error {
			return writeJKS(s.ClientJKS, password, map[string][]*x509.Certificate{"client": s.clientChain},
				map[string][]byte{"client": s.clientKeyDER}, nil)
		},
		func() error { return writeJKS(s.TrustJKS, password, nil, nil, p.ca.cert) },
		func() error {
			data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{p.ca.cert}, password)
			if err != nil {
				return err
			}
			return os.WriteFile(s.TrustP12, data, 0o600)
		},
	} {
		if err := w(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// CAFile writes the CA certificate as PEM next to the stores and returns
// its path.
func (s *Stores) CAFile() (string, error) {
	path := filepath.Join(filepath.Dir(s.ServerP12), "ca-of-stores.pem")
	return path, os.WriteFile(path, pemBlock("CERTIFICATE", s.caCert.Raw), 0o600)
}

// WriteJKSWithTwoKeys writes a JKS keystore holding the server key twice,
// under two aliases: a store Strata refuses (it serves one key).
func (s *Stores) WriteJKSWithTwoKeys(path string) error {
	chains := map[string][]*x509.Certificate{"one": s.serverChain, "two": s.clientChain}
	return writeJKS(path, s.Password, chains, map[string][]byte{"one": s.serverKeyDER, "two": s.clientKeyDER}, nil)
}

// WriteKeytoolStores converts the PKCS12 stores of s with the JDK's keytool
// (as a Kafka operator makes them): server.keytool.jks (with the CA
// imported as "caroot"), server.keytool.p12 (Java's own PKCS12 encryption),
// truststore.keytool.jks and truststore.keytool.p12. It returns
// exec.ErrNotFound when keytool is not installed.
func (s *Stores) WriteKeytoolStores(dir string) (keystoreJKS, keystoreP12, trustJKS, trustP12 string, err error) {
	if _, err := exec.LookPath("keytool"); err != nil {
		return "", "", "", "", err
	}
	keystoreJKS = filepath.Join(dir, "server.keytool.jks")
	keystoreP12 = filepath.Join(dir, "server.keytool.p12")
	trustJKS = filepath.Join(dir, "truststore.keytool.jks")
	trustP12 = filepath.Join(dir, "truststore.keytool.p12")
	caPEM := filepath.Join(dir, "ca.keytool.pem")
	if err := os.WriteFile(caPEM, pemBlock("CERTIFICATE", s.caCert.Raw), 0o600); err != nil {
		return "", "", "", "", err
	}
	pw := s.Password
	for _, args := range [][]string{
		{"-importkeystore", "-srckeystore", s.ServerP12, "-srcstoretype", "PKCS12", "-srcstorepass", pw,
			"-destkeystore", keystoreJKS, "-deststoretype", "JKS", "-deststorepass", pw, "-destkeypass", pw},
		{"-importcert", "-noprompt", "-alias", "caroot", "-file", caPEM, "-keystore", keystoreJKS, "-storetype", "JKS", "-storepass", pw},
		{"-importkeystore", "-srckeystore", keystoreJKS, "-srcstoretype", "JKS", "-srcstorepass", pw,
			"-destkeystore", keystoreP12, "-deststoretype", "PKCS12", "-deststorepass", pw},
		{"-importcert", "-noprompt", "-alias", "caroot", "-file", caPEM, "-keystore", trustJKS, "-storetype", "JKS", "-storepass", pw},
		{"-importcert", "-noprompt", "-alias", "caroot", "-file", caPEM, "-keystore", trustP12, "-storetype", "PKCS12", "-storepass", pw},
	} {
		var out bytes.Buffer
		cmd := exec.Command("keytool", args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return "", "", "", "", fmt.Errorf("keytool %s: %v: %s", args[0], err, out.String())
		}
	}
	return keystoreJKS, keystoreP12, trustJKS, trustP12, nil
}

func chainOf(ders [][]byte, key any, ca *x509.Certificate) ([]*x509.Certificate, []byte, any, error) {
	if len(ders) == 0 {
		return nil, nil, nil, errors.New("testpki: no certificate")
	}
	leaf, err := x509.ParseCertificate(ders[0])
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return []*x509.Certificate{leaf, ca}, keyDER, key, nil
}

func writeP12(path string, key any, chain []*x509.Certificate, password string) error {
	data, err := pkcs12.Modern.Encode(key, chain[0], chain[1:], password)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func writeJKS(path, password string, chains map[string][]*x509.Certificate, keys map[string][]byte, trusted *x509.Certificate) error {
	ks := keystore.New()
	now := time.Now()
	for alias, chain := range chains {
		entry := keystore.PrivateKeyEntry{CreationTime: now, PrivateKey: keys[alias]}
		for _, c := range chain {
			entry.CertificateChain = append(entry.CertificateChain, keystore.Certificate{Type: "X509", Content: c.Raw})
		}
		if err := ks.SetPrivateKeyEntry(alias, entry, []byte(password)); err != nil {
			return err
		}
	}
	if trusted != nil {
		if err := ks.SetTrustedCertificateEntry("caroot", keystore.TrustedCertificateEntry{CreationTime: now,
			Certificate: keystore.Certificate{Type: "X509", Content: trusted.Raw}}); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(password)); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}
