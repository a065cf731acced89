package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The security protocols of listener.security.protocol.map, Kafka's
// SecurityProtocol names.
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

var protocolNames = []string{ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL}

// defaultProtocolMap is Kafka's default listener.security.protocol.map: each
// protocol is also a listener name of that protocol.
const defaultProtocolMap = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"

// The SASL mechanisms of sasl.enabled.mechanisms.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
)

var mechanismNames = []string{MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer}

// unsupportedMechanism is why a SASL mechanism Kafka knows is refused.
const unsupportedMechanism = "not supported by Strata; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"

var (
	clientAuthNames  = []string{"required", "requested", "none"}
	tlsProtocolNames = []string{"TLSv1.2", "TLSv1.3"}
)

// The keystore and truststore types of ssl.keystore.type and
// ssl.truststore.type, as TLSConfig has them (upper case).
const (
	StorePEM    = "PEM"
	StorePKCS12 = "PKCS12"
	StoreJKS    = "JKS"
)

var storeTypeNames = []string{StorePEM, StorePKCS12, StoreJKS}

// encryptedKeyPEM is the PEM type of an encrypted PKCS#8 private key, which
// ssl.key.password decrypts (KIP-651).
const encryptedKeyPEM = "ENCRYPTED PRIVATE KEY"

const convertTraditionalKey = "traditional OpenSSL encrypted keys (Proc-Type: 4,ENCRYPTED) are not supported, as in Kafka; convert it to encrypted PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc -in key.pem -out key.p8.pem) and set ssl.key.password"

// UsesTLS reports whether the listener's connections are TLS (SSL, SASL_SSL).
func (l Listener) UsesTLS() bool {
	return l.Protocol == ProtocolSSL || l.Protocol == ProtocolSASLSSL
}

// UsesSASL reports whether clients of the listener authenticate with SASL
// (SASL_PLAINTEXT, SASL_SSL).
func (l Listener) UsesSASL() bool {
	return l.Protocol == ProtocolSASLPlaintext || l.Protocol == ProtocolSASLSSL
}

// Advertised is the address clients are given for the listener name: its
// entry in advertised.listeners, or the listener itself when
// advertised.listeners does not name it or is not set. The listener's host
// may then be "" or a wildcard, and its port 0: the caller puts in the bound
// address. ok is false when listeners has no such name.
func (b *Broker) Advertised(name string) (Listener, bool) {
	for _, l := range b.AdvertisedListeners {
		if l.Name == name {
			return l, true
		}
	}
	for _, l := range b.Listeners {
		if l.Name == name {
			return l, true
		}
	}
	return Listener{}, false
}

// TLSConfig are the ssl.* settings, broker-wide (Broker.TLS) or of one
// listener (Broker.TLSFor), validated for consistency but not read:
// the files and the inline PEM are loaded by the caller. Exactly one of
// KeystoreLocation and KeystoreChain+KeystoreKey is set when a listener uses
// TLS; at most one of TruststoreLocation and TruststoreCertificates is set,
// and one is when ClientAuth is not "none".
type TLSConfig struct {
	KeystoreType           string // ssl.keystore.type: StorePEM, StorePKCS12 or StoreJKS
	KeystoreLocation       string // ssl.keystore.location: a file of KeystoreType
	KeystorePassword       string // ssl.keystore.password: PKCS12 and JKS only
	KeyPassword            string // ssl.key.password: PKCS12 and JKS only; empty means KeystorePassword
	KeystoreChain          string // ssl.keystore.certificate.chain: inline PEM
	KeystoreKey            string // ssl.keystore.key: inline PEM, unencrypted
	TruststoreType         string // ssl.truststore.type: StorePEM, StorePKCS12 or StoreJKS
	TruststoreLocation     string // ssl.truststore.location: a file of TruststoreType
	TruststorePassword     string // ssl.truststore.password: PKCS12 and JKS only
	TruststoreCertificates string // ssl.truststore.certificates: inline PEM
	// ClientAuth is ssl.client.auth: required, requested or none. In
	// Broker.TLS it is the broker-wide value, which applies to SSL
	// listeners only (KIP-684); in what TLSFor returns, it is what that
	// listener applies.
	ClientAuth   string
	Protocols    []string // ssl.enabled.protocols: TLSv1.2, TLSv1.3
	CipherSuites []string // ssl.cipher.suites, crypto/tls names; nil means Go's defaults
	// VerifyHostname is ssl.endpoint.identification.algorithm=https (the
	// default): a broker connecting to another over TLS checks that the
	// other's certificate names the host it dialed. Empty turns the check
	// off; the certificate must still chain to the truststore.
	VerifyHostname bool
	// AllowDNChanges and AllowSANChanges are ssl.allow.dn.changes and
	// ssl.allow.san.changes: what a keystore reloaded at run time may
	// change in the certificate it replaces (broker-wide only).
	AllowDNChanges, AllowSANChanges bool
}

// protocolMap parses a validated listener.security.protocol.map.
func protocolMap(v string) map[string]string {
	m, err := parseProtocolMap(v)
	if err != nil {
		panic("config: unvalidated listener.security.protocol.map")
	}
	return m
}

// parseProtocolMap parses "NAME:PROTOCOL,...". Names are distinct and upper
// case, as in listeners.
func parseProtocolMap(v string) (map[string]string, error) {
	form := "must be a comma-separated list of NAME:PROTOCOL with distinct upper-case names and PROTOCOL one of: " +
		strings.Join(protocolNames, ", ")
	items := splitList(v)
	if len(items) == 0 {
		return nil, errors.New(form)
	}
	m := make(map[string]string, len(items))
	for _, it := range items {
		name, proto, ok := strings.Cut(it, ":")
		name, proto = strings.TrimSpace(name), strings.TrimSpace(proto)
		switch {
		case !ok || name == "" || name != strings.ToUpper(name):
			return nil, errors.New(form)
		case m[name] != "":
			return nil, fmt.Errorf("%s; %s is given twice", form, name)
		case !slices.Contains(protocolNames, proto):
			return nil, fmt.Errorf("%s; %q is not a protocol", form, proto)
		}
		m[name] = proto
	}
	return m, nil
}

func validProtocolMap(v string) error {
	_, err := parseProtocolMap(v)
	return err
}

// validListeners checks listeners: Kafka's form, and each listener on its own
// port (but any number on port 0, which the system picks).
func validListeners(v string) error {
	ls, err := parseListeners(v)
	if err != nil {
		return err
	}
	byPort := make(map[int]string, len(ls))
	for _, l := range ls {
		if other, dup := byPort[l.Port]; dup && l.Port != 0 {
			return fmt.Errorf("must give each listener its own port: %s and %s both use %d", other, l.Name, l.Port)
		}
		byPort[l.Port] = l.Name
	}
	return nil
}

func validAdvertised(v string) error {
	_, err := parseListeners(v)
	return err
}

// validStoreType allows the store types Strata reads, in any case (Java's
// KeyStore types are case-insensitive).
func validStoreType(v string) error {
	if slices.Contains(storeTypeNames, strings.ToUpper(v)) {
		return nil
	}
	return fmt.Errorf("must be one of %s (Strata reads no other store type; convert it to PKCS12 with keytool -importkeystore -deststoretype PKCS12)",
		strings.Join(storeTypeNames, ", "))
}

// pemCertificates allows inline PEM with at least one certificate. The
// certificates are parsed where they are loaded.
func pemCertificates(v string) error {
	if !strings.Contains(v, "-----BEGIN CERTIFICATE-----") {
		return errors.New("must be inline PEM certificates (-----BEGIN CERTIFICATE----- ...)")
	}
	return nil
}

// pemPrivateKey allows inline PEM with a private key, in the clear or
// encrypted PKCS#8 (ssl.key.password decrypts it).
func pemPrivateKey(v string) error {
	if strings.Contains(v, "Proc-Type: 4,ENCRYPTED") {
		return errors.New(convertTraditionalKey)
	}
	for _, kind := range []string{"PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", encryptedKeyPEM} {
		if strings.Contains(v, "-----BEGIN "+kind+"-----") {
			return nil
		}
	}
	return errors.New("must be an inline PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY, EC PRIVATE KEY or ENCRYPTED PRIVATE KEY)")
}

// validTLSProtocols allows a list of TLSv1.2 and TLSv1.3, explaining why the
// older versions Kafka knows are refused.
func validTLSProtocols(v string) error {
	if err := listOf(tlsProtocolNames...)(v); err != nil {
		for _, it := range splitList(v) {
			if it == "TLSv1" || it == "TLSv1.1" || it == "SSLv3" {
				return fmt.Errorf("%v (%s is refused: Go does not serve versions before TLS 1.2 by default)", err, it)
			}
		}
		return err
	}
	return nil
}

// validCipherSuites allows "" (Go's defaults) or a list of distinct names of
// crypto/tls's secure cipher suites.
func validCipherSuites(v string) error {
	seen := make(map[string]bool)
	for _, it := range splitList(v) {
		switch {
		case it == "":
			return errors.New("must be a comma-separated list of cipher suite names without empty elements")
		case seen[it]:
			return fmt.Errorf("must not name a cipher suite twice: %s", it)
		case slices.ContainsFunc(tls.InsecureCipherSuites(), func(s *tls.CipherSuite) bool { return s.Name == it }):
			return fmt.Errorf("must name secure cipher suites only: %s is insecure", it)
		case cipherSuite(it) == nil:
			return fmt.Errorf("must name cipher suites of Go's crypto/tls, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256; %s is not one", it)
		}
		seen[it] = true
	}
	return nil
}

// cipherSuite is the secure crypto/tls suite called name, or nil.
func cipherSuite(name string) *tls.CipherSuite {
	for _, s := range tls.CipherSuites() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// validSASLMechanisms allows a non-empty list of distinct supported SASL
// mechanisms, explaining why Kafka's others are refused.
func validSASLMechanisms(v string) error {
	for _, it := range splitList(v) {
		if it == "GSSAPI" {
			return fmt.Errorf("%s is %s", it, unsupportedMechanism)
		}
	}
	return listOf(mechanismNames...)(v)
}

// setTLS fills b.TLS and checks that the broker-wide ssl.* settings agree
// with each other (a keystore and a truststore in a file or inline but not
// both; client authentication needs a truststore), then that each TLS
// listener's effective settings do, with its listener.name.<l>.ssl.*
// overrides (see checkListenerTLS): a TLS listener needs a keystore.
func (b *Broker) setTLS(g getter) error {
	b.TLS = TLSConfig{
		KeystoreType:           storeType(g.str("ssl.keystore.type"), b.isSet("ssl.keystore.type"), g.str("ssl.keystore.password")),
		KeystoreLocation:       g.str("ssl.keystore.location"),
		KeystorePassword:       g.str("ssl.keystore.password"),
		KeyPassword:            g.str("ssl.key.password"),
		KeystoreChain:          g.str("ssl.keystore.certificate.chain"),
		KeystoreKey:            g.str("ssl.keystore.key"),
		TruststoreType:         storeType(g.str("ssl.truststore.type"), b.isSet("ssl.truststore.type"), g.str("ssl.truststore.password")),
		TruststoreLocation:     g.str("ssl.truststore.location"),
		TruststorePassword:     g.str("ssl.truststore.password"),
		TruststoreCertificates: g.str("ssl.truststore.certificates"),
		ClientAuth:             g.str("ssl.client.auth"),
		Protocols:              splitList(g.str("ssl.enabled.protocols")),
		CipherSuites:           splitList(g.str("ssl.cipher.suites")),
		VerifyHostname:         g.str(endpointIdentificationKey) != "",
		AllowDNChanges:         g.flag("ssl.allow.dn.changes"),
		AllowSANChanges:        g.flag("ssl.allow.san.changes"),
	}
	t := &b.TLS
	same := func(k string) string { return k }
	if err := storeError(*t, same, same); err != nil {
		return err
	}
	switch {
	case t.ClientAuth != "none" && t.TruststoreLocation == "" && t.TruststoreCertificates == "":
		return &Error{Key: "ssl.client.auth", Value: t.ClientAuth,
			Msg: "needs the CAs of client certificates: set ssl.truststore.location or ssl.truststore.certificates, or ssl.client.auth=none"}
	}
	if len(t.CipherSuites) > 0 && slices.Contains(t.Protocols, "TLSv1.2") &&
		!slices.ContainsFunc(t.CipherSuites, servesTLS12) {
		return &Error{Key: "ssl.cipher.suites", Value: g.str("ssl.cipher.suites"),
			Msg: "names no TLS 1.2 suite while ssl.enabled.protocols has TLSv1.2; add one, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, or drop TLSv1.2"}
	}
	return b.checkListenerTLS()
}

// servesTLS12 reports whether the named suite is one of TLS 1.2's (TLS 1.3's
// are not configurable in Go).
func servesTLS12(name string) bool {
	s := cipherSuite(name)
	return s != nil && slices.Contains(s.SupportedVersions, tls.VersionTLS12)
}
