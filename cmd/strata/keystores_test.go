package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/testpki"
)

func newStores(t *testing.T) (*testpki.PKI, *testpki.Stores, string) {
	t.Helper()
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := pki.WriteStores(dir, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	return pki, s, dir
}

// TestKafkaStoresServeTLS: a listener on a PKCS12 or JKS keystore and
// truststore (Go-written, and keytool-written when the JDK is installed)
// serves its certificate and CA, and verifies a client certificate against
// the truststore, over a real TLS handshake.
func TestKafkaStoresServeTLS(t *testing.T) {
	pki, s, dir := newStores(t)
	type stores struct{ ksType, ks, tsType, ts string }
	cases := map[string]stores{
		"PKCS12":         {config.StorePKCS12, s.ServerP12, config.StorePKCS12, s.TrustP12},
		"JKS":            {config.StoreJKS, s.ServerJKS, config.StoreJKS, s.TrustJKS},
		"PKCS12 and JKS": {config.StorePKCS12, s.ServerP12, config.StoreJKS, s.TrustJKS},
		// Either type reads the other's files, as Java's keystores do.
		"PKCS12 files typed JKS": {config.StoreJKS, s.ServerP12, config.StoreJKS, s.TrustP12},
		"JKS files typed PKCS12": {config.StorePKCS12, s.ServerJKS, config.StorePKCS12, s.TrustJKS},
	}
	if ksJKS, ksP12, tsJKS, tsP12, err := s.WriteKeytoolStores(dir); err == nil {
		cases["keytool JKS"] = stores{config.StoreJKS, ksJKS, config.StoreJKS, tsJKS}
		cases["keytool PKCS12"] = stores{config.StorePKCS12, ksP12, config.StorePKCS12, tsP12}
	} else if !errors.Is(err, exec.ErrNotFound) {
		t.Fatal(err)
	} else {
		t.Log("keytool is not installed: only the Go-written stores are tried")
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := tlsConfig(config.TLSConfig{
				KeystoreType: c.ksType, KeystoreLocation: c.ks, KeystorePassword: s.Password,
				TruststoreType: c.tsType, TruststoreLocation: c.ts, TruststorePassword: s.Password,
				ClientAuth: "required", Protocols: []string{"TLSv1.2", "TLSv1.3"}})
			if err != nil {
				t.Fatal(err)
			}
			chain := handshake(t, cfg, &tls.Config{RootCAs: pki.Pool, Certificates: []tls.Certificate{pki.Client}, ServerName: "127.0.0.1"})
			want := []string{"127.0.0.1", "strata test CA"}
			if got := commonNames(chain); !slices.Equal(got, want) {
				t.Fatalf("served chain %v, want %v (leaf, then its CA)", got, want)
			}
			stranger, err := testpki.Stranger()
			if err != nil {
				t.Fatal(err)
			}
			if err := tryHandshake(cfg, &tls.Config{RootCAs: pki.Pool, Certificates: []tls.Certificate{stranger}, ServerName: "127.0.0.1"}); err == nil {
				t.Fatal("a client certificate of another CA was accepted")
			}
		})
	}
}

func TestKafkaStoreErrorsNameTheFileAndTheFix(t *testing.T) {
	_, s, dir := newStores(t)
	caPEM, err := s.CAFile()
	if err != nil {
		t.Fatal(err)
	}
	twoKeys := filepath.Join(dir, "two.jks")
	if err := s.WriteJKSWithTwoKeys(twoKeys); err != nil {
		t.Fatal(err)
	}
	emptyP12, err := pkcs12.Modern.EncodeTrustStore(nil, s.Password)
	if err != nil {
		t.Fatal(err)
	}
	noCerts := filepath.Join(dir, "empty.p12")
	if err := os.WriteFile(noCerts, emptyP12, 0o600); err != nil {
		t.Fatal(err)
	}
	keystore := func(typ, path, password, keyPassword string) config.TLSConfig {
		return config.TLSConfig{KeystoreType: typ, KeystoreLocation: path, KeystorePassword: password, KeyPassword: keyPassword,
			ClientAuth: "none", Protocols: []string{"TLSv1.3"}}
	}
	truststore := func(typ, path, password string) config.TLSConfig {
		c := keystore(config.StorePKCS12, s.ServerP12, s.Password, "")
		c.TruststoreType, c.TruststoreLocation, c.TruststorePassword, c.ClientAuth = typ, path, password, "required"
		return c
	}
	tests := []struct {
		name string
		cfg  config.TLSConfig
		want []string
	}{
		{"PKCS12 with a wrong password", keystore(config.StorePKCS12, s.ServerP12, "wrong", ""),
			[]string{"ssl.keystore.location " + s.ServerP12 + " (ssl.keystore.type PKCS12)", "the password is wrong"}},
		{"JKS with a wrong password", keystore(config.StoreJKS, s.ServerJKS, "wrong", ""),
			[]string{"ssl.keystore.location " + s.ServerJKS + " (ssl.keystore.type JKS)", "the password is wrong"}},
		{"JKS with a wrong key password", keystore(config.StoreJKS, s.ServerJKS, s.Password, "wrong"),
			[]string{`private key "localhost" cannot be recovered with ssl.key.password`}},
		{"JKS with two keys", keystore(config.StoreJKS, twoKeys, s.Password, ""),
			[]string{"holds 2 private keys (aliases one, two); keep one"}},
		{"a PEM file read as JKS", keystore(config.StoreJKS, caPEM, s.Password, ""),
			[]string{"is neither a JKS nor a PKCS12 store (a PEM file takes type PEM)"}},
		{"a JKS file read as PEM", keystore(config.StorePEM, s.ServerJKS, "", ""),
			[]string{"it is a JKS store: set ssl.keystore.type=JKS and its password"}},
		{"a PKCS12 file read as PEM", keystore("", s.ServerP12, "", ""),
			[]string{"it looks like a PKCS12 store: set ssl.keystore.type=PKCS12"}},
		{"a JKS truststore without trusted entries", truststore(config.StoreJKS, s.ClientJKS, s.Password),
			[]string{"ssl.truststore.location " + s.ClientJKS + " (ssl.truststore.type JKS) holds no trusted certificate entry"}},
		{"a PKCS12 truststore without certificates", truststore(config.StorePKCS12, noCerts, s.Password),
			[]string{"ssl.truststore.location " + noCerts + " (ssl.truststore.type PKCS12) holds no trusted certificate"}},
		{"a PKCS12 keystore as truststore", truststore(config.StorePKCS12, s.ServerP12, s.Password),
			[]string{"ssl.truststore.location " + s.ServerP12 + " (ssl.truststore.type PKCS12) holds a private key: it is a keystore"}},
		{"a JKS truststore read as PEM", truststore(config.StorePEM, s.TrustJKS, ""),
			[]string{"it is a JKS store: set ssl.truststore.type=JKS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tlsConfig(tt.cfg)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "changeit") {
				t.Errorf("error %q quotes the password", err)
			}
		})
	}
}

// TestKeyPairOrdersTheChain: the certificate of the key goes first, then
// its issuer, whatever order the store gave them in.
func TestKeyPairOrdersTheChain(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pki.Server.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	ca := parsePEMCert(t, pki.CAPEM)
	other, err := x509.ParseCertificate(pki.Client.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	got, err := keyPair(pki.Server.PrivateKey, []*x509.Certificate{ca, other, leaf})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Certificate) != 2 || string(got.Certificate[0]) != string(leaf.Raw) || string(got.Certificate[1]) != string(ca.Raw) {
		t.Fatalf("chain of %d certificates, want the leaf then the CA", len(got.Certificate))
	}
	if _, err := keyPair(pki.Server.PrivateKey, []*x509.Certificate{ca, other}); err == nil || !strings.Contains(err.Error(), "no certificate for its private key") {
		t.Fatalf("a store without the key's certificate: %v", err)
	}
}

func parsePEMCert(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemData)
	if block == nil {
		t.Fatal("no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func commonNames(chain []*x509.Certificate) []string {
	out := make([]string, len(chain))
	for i, c := range chain {
		out[i] = c.Subject.CommonName
	}
	return out
}

// handshake runs a TLS handshake between server and client configs over
// loopback and returns the chain the server presented.
func handshake(t *testing.T, server, client *tls.Config) []*x509.Certificate {
	t.Helper()
	var chain []*x509.Certificate
	if err := exchange(server, client, func(c *tls.Conn) { chain = c.ConnectionState().PeerCertificates }); err != nil {
		t.Fatal(err)
	}
	return chain
}

// tryHandshake reports whether the server accepted the client: the server
// answers one byte once its handshake is done, so a refused client
// certificate (which TLS 1.3 reports after the client's side is done)
// fails the read.
func tryHandshake(server, client *tls.Config) error {
	return exchange(server, client, func(*tls.Conn) {})
}

func exchange(server, client *tls.Config, seen func(*tls.Conn)) error {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if c.(*tls.Conn).Handshake() == nil {
			_, _ = c.Write([]byte{1})
		}
	}()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(), client)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		return err
	}
	seen(conn)
	return nil
}
