package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/strata-broker/strata/internal/config"
)

// tlsConfig builds the server TLS configuration of a TLS listener from its
// effective ssl.* settings (Broker.TLSFor: PEM keystore and truststore, and
// the client auth that applies to that listener, KIP-684). Each error is one
// line naming the config to fix.
func tlsConfig(c config.TLSConfig) (*tls.Config, error) {
	cert, err := loadKeystore(c)
	if err != nil {
		return nil, err
	}
	out := &tls.Config{Certificates: []tls.Certificate{cert}}
	if out.MinVersion, out.MaxVersion, err = tlsVersions(c.Protocols); err != nil {
		return nil, err
	}
	if out.CipherSuites, err = cipherSuites(c.CipherSuites); err != nil {
		return nil, err
	}
	switch c.ClientAuth {
	case "required":
		out.ClientAuth = tls.RequireAndVerifyClientCert
	case "requested":
		out.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		out.ClientAuth = tls.NoClientCert
	}
	if out.ClientAuth != tls.NoClientCert {
		if out.ClientCAs, err = loadTruststore(c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// loadKeystore reads the broker's certificate chain and private key: from
// ssl.keystore.location (one PEM file holding both), or inline from
// ssl.keystore.certificate.chain and ssl.keystore.key.
func loadKeystore(c config.TLSConfig) (tls.Certificate, error) {
	if c.KeystoreLocation == "" {
		cert, err := tls.X509KeyPair(normalizePEM(c.KeystoreChain), normalizePEM(c.KeystoreKey))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.certificate.chain and ssl.keystore.key do not hold a usable PEM certificate chain and unencrypted private key (%v)", err)
		}
		return cert, nil
	}
	data, err := os.ReadFile(c.KeystoreLocation)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s cannot be read (%v); point it at a PEM file with the certificate chain and private key", c.KeystoreLocation, unwrapPath(err))
	}
	cert, err := tls.X509KeyPair(data, data)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s does not hold a PEM certificate chain and an unencrypted private key (%v)", c.KeystoreLocation, err)
	}
	return cert, nil
}

// loadTruststore reads the CA certificates that client certificates must
// chain to.
func loadTruststore(c config.TLSConfig) (*x509.CertPool, error) {
	name, data := "ssl.truststore.certificates", normalizePEM(c.TruststoreCertificates)
	if c.TruststoreLocation != "" {
		name = "ssl.truststore.location " + c.TruststoreLocation
		var err error
		if data, err = os.ReadFile(c.TruststoreLocation); err != nil {
			return nil, fmt.Errorf("%s cannot be read (%v); point it at a PEM file of CA certificates", name, unwrapPath(err))
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate; ssl.client.auth=%s needs the CA certificates that client certificates chain to", name, c.ClientAuth)
	}
	return pool, nil
}

// tlsVersions is the range of ssl.enabled.protocols.
func tlsVersions(protocols []string) (lo, hi uint16, err error) {
	for _, p := range protocols {
		var v uint16
		switch p {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		default:
			return 0, 0, fmt.Errorf("ssl.enabled.protocols: %s is not supported; use TLSv1.2 and/or TLSv1.3", p)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	if lo == 0 {
		return 0, 0, errors.New("ssl.enabled.protocols is empty; set it to TLSv1.2,TLSv1.3")
	}
	return lo, hi, nil
}

// cipherSuites maps ssl.cipher.suites' IANA names to Go's ids; none means
// Go's defaults.
func cipherSuites(names []string) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	known := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
	}
	out := make([]uint16, 0, len(names))
	for _, n := range names {
		id, ok := known[n]
		if !ok {
			return nil, fmt.Errorf("ssl.cipher.suites: %s is not a supported cipher suite", n)
		}
		out = append(out, id)
	}
	return out, nil
}

// normalizePEM restores the line breaks of inline PEM that a properties
// file folded onto one line (Kafka accepts that form): each block's header,
// base64 body and footer go on lines of their own.
func normalizePEM(s string) []byte {
	var out strings.Builder
	for {
		begin := strings.Index(s, "-----BEGIN ")
		if begin < 0 {
			return []byte(out.String())
		}
		headerEnd := strings.Index(s[begin+11:], "-----")
		if headerEnd < 0 {
			return []byte(out.String())
		}
		label := s[begin+11 : begin+11+headerEnd]
		footer := "-----END " + label + "-----"
		bodyStart := begin + 11 + headerEnd + 5
		end := strings.Index(s[bodyStart:], footer)
		if end < 0 {
			return []byte(out.String())
		}
		body := strings.Join(strings.Fields(s[bodyStart:bodyStart+end]), "")
		out.WriteString("-----BEGIN " + label + "-----\n")
		for len(body) > 64 {
			out.WriteString(body[:64] + "\n")
			body = body[64:]
		}
		if body != "" {
			out.WriteString(body + "\n")
		}
		out.WriteString(footer + "\n")
		s = s[bodyStart+end+len(footer):]
	}
}
