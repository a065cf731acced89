package main

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/strata-broker/strata/internal/config"
)

// tlsConfig builds the server TLS configuration of a TLS listener from its
// effective ssl.* settings (Broker.TLSFor: keystore and truststore of any type, and
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
// ssl.keystore.location (one PEM file holding both, or a PKCS12 or JKS
// keystore), or inline from ssl.keystore.certificate.chain and
// ssl.keystore.key.
func loadKeystore(c config.TLSConfig) (tls.Certificate, error) {
	if c.KeystoreLocation == "" {
		cert, err := pemKeyPair(normalizePEM(c.KeystoreChain), normalizePEM(c.KeystoreKey), c.KeyPassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.certificate.chain and ssl.keystore.key do not hold a usable PEM certificate chain and private key (%v)", err)
		}
		return cert, nil
	}
	data, err := os.ReadFile(c.KeystoreLocation)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s cannot be read (%v); point it at a %s keystore with the certificate chain and private key",
			c.KeystoreLocation, unwrapPath(err), cmp.Or(c.KeystoreType, config.StorePEM))
	}
	if !isPEM(c.KeystoreType) {
		cert, err := decodeKeystore(c.KeystoreType, data, c.KeystorePassword, c.KeyPassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s (ssl.keystore.type %s) %v", c.KeystoreLocation, c.KeystoreType, err)
		}
		return cert, nil
	}
	cert, err := pemKeyPair(data, data, c.KeyPassword)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s does not hold a usable PEM certificate chain and private key (%v)%s",
			c.KeystoreLocation, err, storeTypeHint("keystore", data))
	}
	return cert, nil
}

// pemKeyPair is the certificate of a PEM chain and private key: an
// encrypted PKCS#8 key is decrypted with keyPassword (ssl.key.password,
// required for it and refused for a key in the clear, as in Kafka).
func pemKeyPair(certPEM, keyPEM []byte, keyPassword string) (tls.Certificate, error) {
	var encrypted *pem.Block
	for rest := keyPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" {
			encrypted = b
			break
		}
	}
	switch {
	case encrypted == nil && keyPassword != "":
		return tls.Certificate{}, errors.New("ssl.key.password is set but the private key is not encrypted: unset it")
	case encrypted == nil:
		return tls.X509KeyPair(certPEM, keyPEM)
	case keyPassword == "":
		return tls.Certificate{}, errors.New("the private key is encrypted: set ssl.key.password")
	}
	key, err := decryptPKCS8(encrypted.Bytes, keyPassword)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the encrypted private key %v", err)
	}
	var certs []*x509.Certificate
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return tls.Certificate{}, err
		}
		certs = append(certs, cert)
	}
	return keyPair(key, certs)
}

// isPEM reports whether a store type is PEM, the default (a TLSConfig made
// without a type has PEM stores).
func isPEM(typ string) bool { return typ == "" || typ == config.StorePEM }

// storeTypeHint tells, after a PEM store failed to load, when the file is
// a JKS or PKCS12 store (Kafka's default type is JKS, Strata's PEM).
func storeTypeHint(store string, data []byte) string {
	switch storeFormat(config.StoreJKS, data) { // tells the two apart by content
	case config.StoreJKS:
		return fmt.Sprintf("; it is a JKS store: set ssl.%s.type=JKS and its password", store)
	case config.StorePKCS12:
		if !bytes.Contains(data, []byte("-----BEGIN")) { // not PEM text that starts with '0'
			return fmt.Sprintf("; it looks like a PKCS12 store: set ssl.%s.type=PKCS12 and its password", store)
		}
	}
	return ""
}

// loadTruststore reads the CA certificates that client certificates must
// chain to.
func loadTruststore(c config.TLSConfig) (*x509.CertPool, error) {
	name, data := "ssl.truststore.certificates", normalizePEM(c.TruststoreCertificates)
	if c.TruststoreLocation != "" {
		name = "ssl.truststore.location " + c.TruststoreLocation
		var err error
		if data, err = os.ReadFile(c.TruststoreLocation); err != nil {
			return nil, fmt.Errorf("%s cannot be read (%v); point it at a %s truststore of CA certificates", name, unwrapPath(err), cmp.Or(c.TruststoreType, config.StorePEM))
		}
	}
	pool := x509.NewCertPool()
	if c.TruststoreLocation != "" && !isPEM(c.TruststoreType) {
		certs, err := decodeTruststore(c.TruststoreType, data, c.TruststorePassword)
		if err != nil {
			return nil, fmt.Errorf("%s (ssl.truststore.type %s) %v", name, c.TruststoreType, err)
		}
		for _, cert := range certs {
			pool.AddCert(cert)
		}
		return pool, nil
	}
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate; ssl.client.auth=%s needs the CA certificates that client certificates chain to%s",
			name, c.ClientAuth, storeTypeHint("truststore", data))
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
