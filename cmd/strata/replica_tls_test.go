package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/testpki"
)

// ssl.endpoint.identification.algorithm on the replica clients: https (the
// default) refuses a certificate that does not name the dialed host; empty
// accepts it, but still refuses a certificate its truststore did not issue.
func TestReplicaTLSEndpointIdentification(t *testing.T) {
	pki, err := testpki.New() // its server certificate names 127.0.0.1 only
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := testpki.Stranger()
	if err != nil {
		t.Fatal(err)
	}
	serve := func(cert tls.Certificate) string {
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}
		}()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		return port
	}
	ours, theirs := serve(pki.Server), serve(stranger)
	cases := []struct {
		name           string
		verifyHostname bool
		host, port     string
		ok             bool
	}{
		{"https, the certificate's address", true, "127.0.0.1", ours, true},
		{"https, another name for the host", true, "localhost", ours, false},
		{"empty, another name for the host", false, "localhost", ours, true},
		{"empty, a CA the truststore lacks", false, "127.0.0.1", theirs, false},
	}
	for _, c := range cases {
		cfg, err := replicaTLS(config.TLSConfig{
			KeystoreChain: string(pki.ServerCertPEM), KeystoreKey: string(pki.ServerKeyPEM),
			TruststoreCertificates: string(pki.CAPEM), Protocols: []string{"TLSv1.2", "TLSv1.3"},
			VerifyHostname: c.verifyHostname,
		})
		if err != nil {
			t.Fatal(err)
		}
		cfg.ServerName = c.host // as franz-go sets it from the dialed address
		conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", c.port), cfg)
		if err == nil {
			conn.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("%s: handshake error %v, want success %v", c.name, err, c.ok)
		}
	}
}

// TestReplicaTLSDialsWithTheCurrentConfig: each replica connection is
// dialed with the inter-broker listener's configuration as it is then: the
// renewed certificate is presented, and a leader whose certificate comes
// from a CA added to the truststore is trusted.
func TestReplicaTLSDialsWithTheCurrentConfig(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	other, err := testpki.New() // the leader's new CA
	if err != nil {
		t.Fatal(err)
	}
	renewedPEM, err := pki.IssueServer("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	var leaderCert atomic.Pointer[tls.Certificate]
	leaderCert.Store(&pki.Server)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{ClientAuth: tls.RequireAnyClientCert,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return leaderCert.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serials := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			if tc.Handshake() == nil {
				serials <- tc.ConnectionState().PeerCertificates[0].SerialNumber.String()
			} else {
				serials <- ""
			}
			c.Close()
		}
	}()
	settings := func(keystore []byte, cas ...[]byte) config.TLSConfig {
		return config.TLSConfig{KeystoreChain: string(keystore), KeystoreKey: string(keystore),
			TruststoreCertificates: string(bytes.Join(cas, nil)), Protocols: []string{"TLSv1.2", "TLSv1.3"}, VerifyHostname: true}
	}
	build := func(c config.TLSConfig) *tls.Config {
		cfg, err := replicaTLS(c)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	current := build(settings(append(append([]byte{}, pki.ServerCertPEM...), pki.ServerKeyPEM...), pki.CAPEM))
	dial := dialReplicaTLS(5*time.Second, func() *tls.Config { return current })
	presented := func() (string, error) {
		t.Helper()
		conn, err := dial(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			<-serials
			return "", err
		}
		_ = conn.(*tls.Conn).Handshake()
		conn.Close()
		return <-serials, nil
	}
	if got, err := presented(); err != nil || got != pki.Server.Leaf.SerialNumber.String() {
		t.Fatalf("presented %s (%v), want the start certificate", got, err)
	}
	current = build(settings(renewedPEM, pki.CAPEM))
	renewed, _ := tls.X509KeyPair(renewedPEM, renewedPEM)
	if got, err := presented(); err != nil || got != renewed.Leaf.SerialNumber.String() {
		t.Fatalf("presented %s (%v), want the renewed certificate %s", got, err, renewed.Leaf.SerialNumber)
	}
	leaderCert.Store(&other.Server) // the leader moved to its new CA
	if _, err := presented(); err == nil {
		t.Fatal("a leader certificate from a CA not in the truststore was accepted")
	}
	current = build(settings(renewedPEM, pki.CAPEM, other.CAPEM))
	if _, err := presented(); err != nil {
		t.Fatalf("a leader certificate from a CA added to the truststore: %v", err)
	}
}
