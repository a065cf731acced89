package main

import (
	"crypto/tls"
	"net"
	"testing"

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
		}, func() *tls.Certificate { return nil })
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

// TestReplicaTLSPresentsTheCurrentCertificate: the replica clients present
// the inter-broker listener's certificate as it is now, not as it was at
// start, once the listener has one.
func TestReplicaTLSPresentsTheCurrentCertificate(t *testing.T) {
	pki, err := testpki.New()
	if err != nil {
		t.Fatal(err)
	}
	renewedPEM, err := pki.IssueServer("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	renewed, err := tls.X509KeyPair(renewedPEM, renewedPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pki.Server}, ClientAuth: tls.RequireAnyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serials := make(chan string, 2)
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
	var current *tls.Certificate
	cfg, err := replicaTLS(config.TLSConfig{
		KeystoreChain: string(pki.ServerCertPEM), KeystoreKey: string(pki.ServerKeyPEM),
		TruststoreCertificates: string(pki.CAPEM), Protocols: []string{"TLSv1.2", "TLSv1.3"},
	}, func() *tls.Certificate { return current })
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServerName = "127.0.0.1"
	presented := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.Handshake()
		conn.Close()
		return <-serials
	}
	if got, want := presented(), pki.Server.Leaf.SerialNumber.String(); got != want {
		t.Fatalf("presented %s before the listener had one, want the start certificate %s", got, want)
	}
	current = &renewed
	if got, want := presented(), renewed.Leaf.SerialNumber.String(); got != want {
		t.Fatalf("presented %s, want the listener's current %s", got, want)
	}
}
