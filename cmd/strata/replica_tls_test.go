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
