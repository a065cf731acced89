package config

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
)

const (
	testCert = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
	testKey  = "-----BEGIN PRIVATE KEY-----\nMIIEfake\n-----END PRIVATE KEY-----\n"
)

// checkLoadErr asserts that err is one line wrapping an *Error for key and
// containing every fragment.
func checkLoadErr(t *testing.T, err error, key string, frags ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one for %s", key)
	}
	msg := err.Error()
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != key {
		t.Fatalf("error %q is not an *Error for key %s", msg, key)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	for _, f := range frags {
		if !strings.Contains(msg, f) {
			t.Errorf("error %q does not contain %q", msg, f)
		}
	}
}

func TestSecurityDefaults(t *testing.T) {
	defaults := []struct {
		key, value string
		null       bool
		typ        Type
		sensitive  bool
	}{
		{"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", false, String, false},
		{"ssl.keystore.type", "PEM", false, String, false},
		{"ssl.keystore.location", "", true, String, false},
		{"ssl.keystore.certificate.chain", "", true, Password, true},
		{"ssl.keystore.key", "", true, Password, true},
		{"ssl.truststore.type", "PEM", false, String, false},
		{"ssl.truststore.location", "", true, String, false},
		{"ssl.truststore.certificates", "", true, Password, true},
		{"ssl.keystore.password", "", true, Password, true},
		{"ssl.key.password", "", true, Password, true},
		{"ssl.truststore.password", "", true, Password, true},
		{"ssl.client.auth", "none", false, String, false},
		{"ssl.enabled.protocols", "TLSv1.2,TLSv1.3", false, List, false},
		{"ssl.protocol", "TLSv1.3", false, String, false},
		{"ssl.cipher.suites", "", true, List, false},
		{"sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512", false, List, false},
	}
	for _, d := range defaults {
		def, ok := LookupBroker(d.key)
		if !ok {
			t.Errorf("no def %s", d.key)
			continue
		}
		if def.Default != d.value || def.HasDefault == d.null || def.Type != d.typ || def.Sensitive != d.sensitive || !def.ReadOnly {
			t.Errorf("%s: default %q (has %v), type %v, sensitive %v, read-only %v; want %q (null %v), %v, sensitive %v, read-only",
				d.key, def.Default, def.HasDefault, def.Type, def.Sensitive, def.ReadOnly, d.value, d.null, d.typ, d.sensitive)
		}
	}

	b := mustLoad(t, "", nil, nil)
	wantTLS := TLSConfig{KeystoreType: StorePEM, TruststoreType: StorePEM, ClientAuth: "none", Protocols: []string{"TLSv1.2", "TLSv1.3"}, VerifyHostname: true}
	if !reflect.DeepEqual(b.TLS, wantTLS) {
		t.Errorf("TLS = %+v, want %+v", b.TLS, wantTLS)
	}
	if want := []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}; !reflect.DeepEqual(b.SASLMechanisms, want) {
		t.Errorf("SASLMechanisms = %v, want %v", b.SASLMechanisms, want)
	}
	if b.PlainUsers != nil {
		t.Errorf("PlainUsers = %v, want nil", b.PlainUsers)
	}
	want := Listener{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, Protocol: "PLAINTEXT"}
	if b.Listeners[0] != want || b.AdvertisedListeners[0] != want {
		t.Errorf("listener %+v, advertised %+v; want %+v", b.Listeners[0], b.AdvertisedListeners[0], want)
	}
}

func TestCheckSecurityKeys(t *testing.T) {
	tests := []struct {
		key, value string
		wantErr    []string // nil = valid; otherwise fragments of the message
	}{
		{"listener.security.protocol.map", "A:SSL, B:SASL_SSL,PLAINTEXT:PLAINTEXT", nil},
		{"listener.security.protocol.map", "A:TLS", []string{`"TLS" is not a protocol`, "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"}},
		{"listener.security.protocol.map", "A:ssl", []string{"is not a protocol"}},
		{"listener.security.protocol.map", "A:SSL,A:PLAINTEXT", []string{"A is given twice"}},
		{"listener.security.protocol.map", "a:SSL", []string{"upper-case names"}},
		{"listener.security.protocol.map", "SSL", []string{"NAME:PROTOCOL"}},
		{"listener.security.protocol.map", "", []string{"NAME:PROTOCOL"}},
		{"listeners", "PLAINTEXT://:9092,SSL://:9093,SASL_SSL://h:9094", nil},
		{"listeners", "PLAINTEXT://:0,SSL://:0", nil},
		{"listeners", "PLAINTEXT://a:9092,SSL://b:9092", []string{"its own port", "PLAINTEXT and SSL both use 9092"}},
		{"advertised.listeners", "PLAINTEXT://a:9092,SSL://b:9092", nil},

		{"ssl.keystore.type", "PEM", nil},
		{"ssl.keystore.type", "JKS", nil},
		{"ssl.keystore.type", "PKCS12", nil},
		{"ssl.keystore.type", "pem", nil},
		{"ssl.keystore.type", "JCEKS", []string{"must be one of PEM, PKCS12, JKS", "keytool -importkeystore -deststoretype PKCS12"}},
		{"ssl.truststore.type", "PEM", nil},
		{"ssl.truststore.type", "jks", nil},
		{"ssl.truststore.type", "PKCS12", nil},
		{"ssl.truststore.type", "BCFKS", []string{"must be one of PEM, PKCS12, JKS"}},
		{"ssl.keystore.location", "/etc/strata/ks.pem", nil},
		{"ssl.keystore.location", "", []string{"must not be empty"}},
		{"ssl.truststore.location", "", []string{"must not be empty"}},
		{"ssl.keystore.certificate.chain", testCert, nil},
		{"ssl.keystore.certificate.chain", "MIIBfake", []string{"inline PEM certificates"}},
		{"ssl.keystore.key", testKey, nil},
		{"ssl.keystore.key", "-----BEGIN RSA PRIVATE KEY----- MIIE -----END RSA PRIVATE KEY-----", nil},
		{"ssl.keystore.key", "-----BEGIN EC PRIVATE KEY-----\nx\n-----END EC PRIVATE KEY-----", nil},
		{"ssl.keystore.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n-----END ENCRYPTED PRIVATE KEY-----", nil},
		{"ssl.keystore.key", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nx\n-----END RSA PRIVATE KEY-----",
			[]string{"traditional OpenSSL encrypted keys", "openssl pkcs8 -topk8 -v2 aes-256-cbc"}},
		{"ssl.keystore.key", testCert, []string{"inline PEM private key"}},
		{"ssl.truststore.certificates", testCert + testCert, nil},
		{"ssl.truststore.certificates", "x", []string{"inline PEM certificates"}},
		{"ssl.client.auth", "required", nil},
		{"ssl.client.auth", "requested", nil},
		{"ssl.client.auth", "none", nil},
		{"ssl.client.auth", "REQUIRED", []string{"one of: required, requested, none"}},
		{"ssl.client.auth", "want", []string{"one of: required, requested, none"}},
		{"ssl.enabled.protocols", "TLSv1.3", nil},
		{"ssl.enabled.protocols", "TLSv1.3, TLSv1.2", nil},
		{"ssl.enabled.protocols", "TLSv1.1,TLSv1.2", []string{"list of: TLSv1.2, TLSv1.3", "TLSv1.1 is refused", "Go does not serve"}},
		{"ssl.enabled.protocols", "TLSv1", []string{"TLSv1 is refused"}},
		{"ssl.enabled.protocols", "TLSv1.3,TLSv1.3", []string{"list of: TLSv1.2, TLSv1.3"}},
		{"ssl.enabled.protocols", "", []string{"list of: TLSv1.2, TLSv1.3"}},
		{"ssl.protocol", "TLSv1.2", nil},
		{"ssl.protocol", "TLS", []string{"one of: TLSv1.2, TLSv1.3"}},
		{"ssl.protocol", "TLSv1.1", []string{"one of: TLSv1.2, TLSv1.3"}},
		{"ssl.cipher.suites", "", nil},
		{"ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256", nil},
		{"ssl.cipher.suites", "TLS_RSA_WITH_AES_128_GCM_SHA256", []string{"secure cipher suites only", "TLS_RSA_WITH_AES_128_GCM_SHA256 is insecure"}},
		{"ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_RC4_128_SHA", []string{"is insecure"}},
		{"ssl.cipher.suites", "ECDHE-RSA-AES128-GCM-SHA256", []string{"Go's crypto/tls", "ECDHE-RSA-AES128-GCM-SHA256 is not one"}},
		{"ssl.cipher.suites", "TLS_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256", []string{"twice"}},
		{"ssl.cipher.suites", "TLS_AES_128_GCM_SHA256,", []string{"without empty elements"}},
		{"sasl.enabled.mechanisms", "PLAIN", nil},
		{"sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", nil},
		{"sasl.enabled.mechanisms", "GSSAPI", []string{"GSSAPI is not supported by Strata; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"}},
		{"sasl.enabled.mechanisms", "PLAIN,OAUTHBEARER", nil},
		{"sasl.enabled.mechanisms", "plain", []string{"list of: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"}},
		{"sasl.enabled.mechanisms", "PLAIN,PLAIN", []string{"list of"}},
		{"sasl.enabled.mechanisms", "", []string{"list of"}},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			d, ok := LookupBroker(tt.key)
			if !ok {
				t.Fatalf("no def %s", tt.key)
			}
			err := d.Check(tt.value)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			shown := tt.value
			if d.Sensitive {
				shown = hiddenValue
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tt.key || ce.Value != shown {
				t.Fatalf("Check = %#v, want an *Error for the key and value %q", err, shown)
			}
			if d.Sensitive && strings.Contains(err.Error(), "fake") {
				t.Errorf("error %q quotes a sensitive value", err)
			}
			for _, w := range append(tt.wantErr, tt.key) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestListenersAndProtocols(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{
		"listeners":                      "PLAINTEXT://:9092,CLIENTS://0.0.0.0:9093,INTERNAL_SASL://10.0.0.1:9094",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENTS:SSL,INTERNAL_SASL:SASL_PLAINTEXT",
		"advertised.listeners":           "CLIENTS://kafka.example.com:443",
		"ssl.keystore.location":          "/ks.pem",
	})
	want := []Listener{
		{Name: "PLAINTEXT", Host: "", Port: 9092, Protocol: ProtocolPlaintext},
		{Name: "CLIENTS", Host: "0.0.0.0", Port: 9093, Protocol: ProtocolSSL},
		{Name: "INTERNAL_SASL", Host: "10.0.0.1", Port: 9094, Protocol: ProtocolSASLPlaintext},
	}
	if !reflect.DeepEqual(b.Listeners, want) {
		t.Errorf("Listeners = %+v, want %+v", b.Listeners, want)
	}
	wantAdv := []Listener{{Name: "CLIENTS", Host: "kafka.example.com", Port: 443, Protocol: ProtocolSSL}}
	if !reflect.DeepEqual(b.AdvertisedListeners, wantAdv) {
		t.Errorf("AdvertisedListeners = %+v, want %+v", b.AdvertisedListeners, wantAdv)
	}
	for _, l := range []struct {
		l         Listener
		tls, sasl bool
	}{
		{Listener{Protocol: ProtocolPlaintext}, false, false},
		{Listener{Protocol: ProtocolSSL}, true, false},
		{Listener{Protocol: ProtocolSASLPlaintext}, false, true},
		{Listener{Protocol: ProtocolSASLSSL}, true, true},
	} {
		if l.l.UsesTLS() != l.tls || l.l.UsesSASL() != l.sasl {
			t.Errorf("%s: UsesTLS %v UsesSASL %v, want %v %v", l.l.Protocol, l.l.UsesTLS(), l.l.UsesSASL(), l.tls, l.sasl)
		}
	}
}

func TestAdvertised(t *testing.T) {
	flags := map[string]string{
		"listeners":             "PLAINTEXT://:9092,SSL://0.0.0.0:9093",
		"ssl.keystore.location": "/ks.pem",
	}
	tests := []struct {
		name       string
		advertised string // "" = not set
		lookup     string
		want       Listener
		ok         bool
	}{
		{"unset: the listener", "", "SSL", Listener{Name: "SSL", Host: "0.0.0.0", Port: 9093, Protocol: "SSL"}, true},
		{"unset: unknown name", "", "SASL_SSL", Listener{}, false},
		{"named", "SSL://public.example.com:19093", "SSL", Listener{Name: "SSL", Host: "public.example.com", Port: 19093, Protocol: "SSL"}, true},
		{"not named: the listener", "SSL://public.example.com:19093", "PLAINTEXT", Listener{Name: "PLAINTEXT", Port: 9092, Protocol: "PLAINTEXT"}, true},
		{"set: unknown name", "SSL://public.example.com:19093", "INTERNAL", Listener{}, false},
		{"case matters", "", "ssl", Listener{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := map[string]string{}
			for k, v := range flags {
				f[k] = v
			}
			if tt.advertised != "" {
				f["advertised.listeners"] = tt.advertised
			}
			b := mustLoad(t, "", nil, f)
			got, ok := b.Advertised(tt.lookup)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("Advertised(%s) = %+v, %v; want %+v, %v", tt.lookup, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSecurityCrossKeyErrors(t *testing.T) {
	sslListener := map[string]string{"listeners": "SSL://:9093"}
	with := withKeys
	tests := []struct {
		name  string
		flags map[string]string
		key   string
		want  []string
	}{
		{"unmapped listener", map[string]string{"listeners": "PLAINTEXT://:9092,INTERNAL://:9093"},
			"listener.security.protocol.map", []string{"no protocol for listener INTERNAL", "add INTERNAL:<PROTOCOL>"}},
		{"map without the default names", map[string]string{"listener.security.protocol.map": "INTERNAL:PLAINTEXT"},
			"listener.security.protocol.map", []string{"listener PLAINTEXT"}},
		{"unknown protocol", map[string]string{"listener.security.protocol.map": "PLAINTEXT:TLS"},
			"listener.security.protocol.map", []string{"is not a protocol"}},
		{"duplicate map names", map[string]string{"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,PLAINTEXT:SSL"},
			"listener.security.protocol.map", []string{"given twice"}},
		{"duplicate listener names", map[string]string{"listeners": "PLAINTEXT://:1,PLAINTEXT://:2"},
			"listeners", []string{"distinct"}},
		{"listeners on one port", map[string]string{"listeners": "PLAINTEXT://:9092,SASL_PLAINTEXT://:9092"},
			"listeners", []string{"its own port"}},
		{"advertised name not in listeners", map[string]string{"advertised.listeners": "SSL://h:9093"},
			"advertised.listeners", []string{"names listener SSL", "listeners (PLAINTEXT://127.0.0.1:9092) does not have"}},
		{"ssl listener without keystore", sslListener,
			"ssl.keystore.location", []string{"listener SSL (SSL)", "ssl.keystore.certificate.chain and ssl.keystore.key"}},
		{"sasl_ssl listener without keystore", map[string]string{"listeners": "SASL_SSL://:9093", "sasl.enabled.mechanisms": "SCRAM-SHA-256"},
			"ssl.keystore.location", []string{"listener SASL_SSL (SASL_SSL)"}},
		{"keystore file and inline", with(sslListener, "ssl.keystore.location", "/ks.pem", "ssl.keystore.certificate.chain", testCert, "ssl.keystore.key", testKey),
			"ssl.keystore.location", []string{"not both"}},
		{"keystore file and inline key", with(sslListener, "ssl.keystore.location", "/ks.pem", "ssl.keystore.key", testKey),
			"ssl.keystore.location", []string{"not both"}},
		{"chain without key", with(sslListener, "ssl.keystore.certificate.chain", testCert),
			"ssl.keystore.certificate.chain", []string{"ssl.keystore.key is not", "[hidden]"}},
		{"key without chain", with(nil, "ssl.keystore.key", testKey),
			"ssl.keystore.key", []string{"ssl.keystore.certificate.chain is not"}},
		{"client auth without truststore", with(sslListener, "ssl.keystore.location", "/ks.pem", "ssl.client.auth", "required"),
			"ssl.client.auth", []string{"ssl.truststore.location or ssl.truststore.certificates"}},
		{"requested client auth without truststore", with(nil, "ssl.client.auth", "requested"),
			"ssl.client.auth", []string{"ssl.truststore.location or ssl.truststore.certificates"}},
		{"two truststores", with(nil, "ssl.truststore.location", "/ca.pem", "ssl.truststore.certificates", testCert),
			"ssl.truststore.location", []string{"not both"}},
		{"only TLS 1.3 suites with TLSv1.2", with(nil, "ssl.cipher.suites", "TLS_AES_128_GCM_SHA256"),
			"ssl.cipher.suites", []string{"names no TLS 1.2 suite"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBroker("", nil, tt.flags)
			checkLoadErr(t, err, tt.key, tt.want...)
			if strings.Contains(err.Error(), "fake") {
				t.Errorf("error %q quotes a sensitive value", err)
			}
		})
	}

	// The same settings, made consistent, load.
	for _, flags := range []map[string]string{
		with(sslListener, "ssl.keystore.location", "/ks.pem"),
		with(sslListener, "ssl.keystore.certificate.chain", testCert, "ssl.keystore.key", testKey),
		with(sslListener, "ssl.keystore.location", "/ks.pem", "ssl.client.auth", "required", "ssl.truststore.location", "/ca.pem"),
		with(sslListener, "ssl.keystore.location", "/ks.pem", "ssl.client.auth", "requested", "ssl.truststore.certificates", testCert),
		with(nil, "ssl.keystore.location", "/ks.pem"), // settings without a TLS listener are allowed
		with(nil, "ssl.cipher.suites", "TLS_AES_128_GCM_SHA256", "ssl.enabled.protocols", "TLSv1.3"),
	} {
		if _, err := LoadBroker("", nil, flags); err != nil {
			t.Errorf("%v: %v", flags, err)
		}
	}
	b := mustLoad(t, "", nil, with(sslListener, "ssl.keystore.certificate.chain", testCert, "ssl.keystore.key", testKey,
		"ssl.truststore.certificates", testCert, "ssl.client.auth", "requested", "ssl.enabled.protocols", "TLSv1.3",
		"ssl.cipher.suites", "TLS_AES_256_GCM_SHA384", "ssl.endpoint.identification.algorithm", ""))
	// Values are trimmed, as every value is.
	cert, key := strings.TrimSpace(testCert), strings.TrimSpace(testKey)
	want := TLSConfig{KeystoreType: StorePEM, KeystoreChain: cert, KeystoreKey: key, TruststoreType: StorePEM, TruststoreCertificates: cert,
		ClientAuth: "requested", Protocols: []string{"TLSv1.3"}, CipherSuites: []string{"TLS_AES_256_GCM_SHA384"}}
	if !reflect.DeepEqual(b.TLS, want) {
		t.Errorf("TLS = %+v, want %+v", b.TLS, want)
	}
}

// TestStorePasswords: the store passwords go with PKCS12 and JKS stores,
// and each disagreement is one error naming the key to fix, without the
// password.
func TestStorePasswords(t *testing.T) {
	ks := map[string]string{"listeners": "SSL://:9093", "ssl.keystore.location": "/ks"}
	tests := []struct {
		name  string
		flags map[string]string
		key   string
		want  []string
	}{
		{"keystore password with PEM", withKeys(ks, "ssl.keystore.type", "PEM", "ssl.keystore.password", "s3cret"),
			"ssl.keystore.password", []string{"is for a PKCS12 or JKS keystore (ssl.keystore.type)", "[hidden]"}},
		{"key password with an inline key in the clear", withKeys(nil, "listeners", "SSL://:9093", "ssl.keystore.certificate.chain", testCert,
			"ssl.keystore.key", testKey, "ssl.key.password", "s3cret"),
			"ssl.key.password", []string{"is set but ssl.keystore.key is not encrypted: unset it"}},
		{"an encrypted inline key without its password", withKeys(nil, "listeners", "SSL://:9093", "ssl.keystore.certificate.chain", testCert,
			"ssl.keystore.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n-----END ENCRYPTED PRIVATE KEY-----"),
			"ssl.key.password", []string{"must be set: ssl.keystore.key is an encrypted private key"}},
		{"truststore password with PEM", withKeys(ks, "ssl.truststore.type", "pem", "ssl.truststore.location", "/ca.pem", "ssl.truststore.password", "s3cret"),
			"ssl.truststore.password", []string{"is for a PKCS12 or JKS truststore"}},
		{"PKCS12 keystore without a password", withKeys(ks, "ssl.keystore.type", "PKCS12"),
			"ssl.keystore.password", []string{"must be set: the PKCS12 keystore /ks is read with it"}},
		{"JKS keystore without a password", withKeys(ks, "ssl.keystore.type", "jks"),
			"ssl.keystore.password", []string{"must be set: the JKS keystore /ks"}},
		{"PKCS12 key password of its own", withKeys(ks, "ssl.keystore.type", "PKCS12", "ssl.keystore.password", "s3cret", "ssl.key.password", "s3cret2"),
			"ssl.key.password", []string{"a PKCS12 keystore has one password"}},
		{"JKS truststore without a password", withKeys(ks, "ssl.truststore.type", "JKS", "ssl.truststore.location", "/ts"),
			"ssl.truststore.password", []string{"the JKS truststore /ts is checked with it"}},
		{"inline keystore of type PKCS12", withKeys(nil, "listeners", "SSL://:9093", "ssl.keystore.type", "PKCS12",
			"ssl.keystore.certificate.chain", testCert, "ssl.keystore.key", testKey),
			"ssl.keystore.type", []string{"are PEM: set ssl.keystore.type=PEM"}},
		{"inline truststore of type JKS", withKeys(ks, "ssl.truststore.type", "JKS", "ssl.truststore.certificates", testCert),
			"ssl.truststore.type", []string{"are PEM: set ssl.truststore.type=PEM"}},
		{"a listener's JKS keystore inherits no password", withKeys(ks, "listener.name.ssl.ssl.keystore.type", "JKS",
			"listener.name.ssl.ssl.keystore.location", "/l.jks"),
			"listener.name.ssl.ssl.keystore.password", []string{"the JKS keystore /l.jks"}},
		{"a listener's password with the broker-wide PEM type", withKeys(ks, "ssl.keystore.type", "PEM", "listener.name.ssl.ssl.keystore.password", "s3cret"),
			"listener.name.ssl.ssl.keystore.password", []string{"(listener.name.ssl.ssl.keystore.type)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBroker("", nil, tt.flags)
			checkLoadErr(t, err, tt.key, tt.want...)
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q quotes the password", err)
			}
		})
	}
	// A password without a type is Kafka's default type, JKS, as a
	// server.properties written for Kafka means it (Strata's default PEM
	// has no password), broker-wide and for a listener's own password.
	b := mustLoad(t, "", nil, withKeys(ks, "ssl.keystore.password", "p", "ssl.truststore.location", "/ts", "ssl.truststore.password", "p",
		"listener.name.ssl.ssl.keystore.location", "/l.p12"))
	if b.TLS.KeystoreType != StoreJKS || b.TLS.TruststoreType != StoreJKS {
		t.Errorf("implied types %s, %s; want JKS, JKS", b.TLS.KeystoreType, b.TLS.TruststoreType)
	}
	b = mustLoad(t, "", nil, withKeys(ks, "listener.name.ssl.ssl.keystore.location", "/l.jks", "listener.name.ssl.ssl.keystore.password", "p"))
	if got := b.TLSFor("SSL"); got.KeystoreType != StoreJKS || b.TLS.KeystoreType != StorePEM {
		t.Errorf("a listener's own password: type %s (broker-wide %s), want JKS (PEM)", got.KeystoreType, b.TLS.KeystoreType)
	}

	// Consistent, they load; PKCS12 truststores may have no password.
	for _, flags := range []map[string]string{
		withKeys(ks, "ssl.keystore.type", "PKCS12", "ssl.keystore.password", "p", "ssl.key.password", "p"),
		withKeys(ks, "ssl.keystore.type", "JKS", "ssl.keystore.password", "p", "ssl.key.password", "k"),
		withKeys(ks, "ssl.key.password", "k"), // a PEM file's key: checked when the file is read
		withKeys(ks, "ssl.keystore.type", "JKS", "ssl.keystore.password", "p", "ssl.truststore.type", "PKCS12", "ssl.truststore.location", "/ts"),
		withKeys(ks, "listener.name.ssl.ssl.keystore.type", "JKS", "listener.name.ssl.ssl.keystore.password", "p"),
	} {
		if _, err := LoadBroker("", nil, flags); err != nil {
			t.Errorf("%v: %v", flags, err)
		}
	}
	_, err := LoadBroker("", nil, map[string]string{"sasl.jaas.config": "x"})
	checkLoadErr(t, err, "sasl.jaas.config", "listener.name.<listener>.<mechanism>.sasl.jaas.config")
	// Other unknown keys keep the generic message.
	_, err = LoadBroker("", nil, map[string]string{"ssl.keystore.passwd": "x"})
	checkLoadErr(t, err, "ssl.keystore.passwd", unknownBroker)
}

// withKeys is a copy of base with the key, value pairs kv set.
func withKeys(base map[string]string, kv ...string) map[string]string {
	m := maps.Clone(base)
	if m == nil {
		m = make(map[string]string)
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// An unset store type is described as the store's password makes it: JKS,
// Kafka's default, with a password; PEM, Strata's, without.
func TestImpliedStoreTypeIsDescribed(t *testing.T) {
	described := func(b *Broker, key string) Entry {
		for _, e := range DescribeBroker(b) {
			if e.Name == key {
				return e
			}
		}
		t.Fatalf("%s not described", key)
		return Entry{}
	}
	b := mustLoad(t, "", nil, map[string]string{"ssl.keystore.password": "p"})
	if e := described(b, "ssl.keystore.type"); e.Value != StoreJKS || e.Source != Default {
		t.Errorf("ssl.keystore.type with a password: %q from %v, want JKS from the default", e.Value, e.Source)
	}
	if e := described(b, "ssl.truststore.type"); e.Value != StorePEM {
		t.Errorf("ssl.truststore.type without a password: %q, want PEM", e.Value)
	}
}
